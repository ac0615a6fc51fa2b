import { parsePlan } from '../../engine/plan/plan.js';
import { hostPath } from '../../engine/wire/hostPath.js';
import { defaultMetrics } from '../exec/evalSums.js';
import { scheduleTraits } from '../../engine/plan/scheduleTraits.js';
import type { PeerMesh } from '../comm/peerMesh.js';
import type { AgentRequestOf } from '../../engine/protocol/agentRequests.js';
import { ProcessGroup } from '../comm/processGroup.js';
import { openDataset } from '../data/openDataset.js';
import type { GraphStage } from '../exec/graph/graphStage.js';
import { defaultTraining } from '../../engine/protocol/trainingSetup.js';
import { GradientSync } from '../exec/gradientSync.js';
import { createOptimizer } from '../exec/optimizer.js';
import type { StageExecutor } from '../exec/stageExecutor.js';
import { syntheticStage } from '../exec/syntheticStage.js';
import { TensorGroup } from '../exec/tensorParallel/tensorGroup.js';
import { neighbours, type StageContext } from './stageContext.js';

/**
 * Build this agent's part of the plan: link up with the peers it exchanges tensors with, then create
 * the stage — whole, or this agent's tensor-parallel shard of it — with its optimizer.
 */
export async function buildStage(setup: AgentRequestOf<'setup'>, mesh: PeerMesh): Promise<StageContext> {
  const plan = parsePlan(setup.plan);
  const me = setup.placement;
  const stage = plan.stages[me.stage];
  const training = setup.training ?? defaultTraining(setup.model);
  const links = neighbours(plan, me);
  const wanted = new Set(links.links);
  await mesh.connect(me.rank, setup.peers.filter((p) => wanted.has(p.rank)));

  // The user's own layer classes (--layers) are registered before tfjs-layers builds the model.
  if (setup.model.source?.layersFile) {
    const { registerUserLayers } = await import('../../engine/wire/userLayers.js');
    await registerUserLayers(hostPath(setup.model.source.layersFile));
  }
  let module: StageExecutor;
  let tensorGroup: TensorGroup | null = null;
  let graphStage: GraphStage | null = null;
  if (stage.tensorParallel > 1) {
    // One shard of the stage, any model: its layers by tfjs-layers, Megatron's split layers by Shoal.
    if (setup.syntheticStageMs) throw new Error('Synthetic stages cannot be tensor-parallel: they have no layers to shard.');
    tensorGroup = new TensorGroup(new ProcessGroup(me.rank, links.tensorGroup, mesh.links, { name: `tensor-parallel group of stage ${me.stage} replica ${me.replica}` }));
    const { buildShardedGraphStage } = await import('../exec/tensorParallel/buildShardedGraphStage.js');
    module = await buildShardedGraphStage(setup.model, plan, me.stage, training.losses, tensorGroup);
  } else {
    // Every model, built-in or the user's own: its layers built by tfjs-layers. Loaded only here, so
    // that the coordinator and tools importing this module do not evaluate tfjs-layers.
    const { buildGraphStage } = await import('../exec/graph/buildGraphStage.js');
    // PipeMare differentiates at the current (or corrected) weights, so an asynchronous stage
    // recomputes its activations in the backward pass rather than keeping the forward pass's.
    const keepActivations = !plan.recompute && scheduleTraits(plan.schedule).stepBarrier;
    graphStage = await buildGraphStage(setup.model, plan, me.stage, training.losses, keepActivations);
    module = setup.syntheticStageMs ? syntheticStage(graphStage, setup.syntheticStageMs) : graphStage;
  }
  const dataGroup = new ProcessGroup(me.rank, links.dataParallelGroup, mesh.links, { name: `data-parallel group of stage ${me.stage}${tensorGroup ? ` shard ${me.shard}` : ''}` });
  const clip = plan.gradientClipNorm === undefined ? undefined : {
    norm: plan.gradientClipNorm,
    group: new ProcessGroup(me.rank, links.everyone, mesh.links, { name: 'all ranks (global gradient norm)' }),
    // A parameter every shard holds whole is counted by shard 0 only, so each element counts once.
    countsTowardNorm: module.paramSpecs.map((spec) => spec.sum === 'sharded' || me.shard === 0),
  };
  // A schedule with a step barrier sums gradients over the data-parallel group once per step; the
  // asynchronous pipeline updates each stage with its own optimizer as micro-batches stream through.
  const { stepBarrier } = scheduleTraits(plan.schedule);
  return {
    plan,
    model: setup.model,
    me,
    module,
    overlapGradients: setup.overlapGradients,
    tensorGroup,
    gradientSync: stepBarrier ? new GradientSync({ group: dataGroup, params: module.params, zero: plan.zero, optimizer: plan.optimizer, clip }) : null,
    optimizer: stepBarrier ? null : createOptimizer(plan.optimizer),
    mesh,
    data: await openDataset(training.data, setup.model, training.losses, plan.seed),
    measures: { losses: training.losses, metrics: training.metrics ?? defaultMetrics(training.losses) },
    feeds: { inputs: setup.model.layers.filter((l) => l.spec.kind === 'input').map((l) => l.id), targets: training.losses.map((l) => l.output) },
    graphStage,
    dataGroup,
    prevRank: links.prevRank,
    nextRank: links.nextRank,
    dataParallelGroup: links.dataParallelGroup,
    slowdown: 1,
  };
}
