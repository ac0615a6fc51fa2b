import { stageCuts } from '../model/stageCuts.js';
import type { LayerNode, ModelGraph } from '../model/graph.js';
import type { Plan } from '../plan/plan.js';
import { splitAxis, weightLayout } from '../plan/sbp.js';
import { product } from '../model/facts/common.js';
import { tapeElements } from '../model/facts/tape.js';

/** A collective inside a stage replica's tensor-parallel group, with its full tensor size per sample. */
export interface GroupCollective {
  kind: 'allReduce' | 'allGather' | 'reduceScatter';
  bytes: number;
}

/** Per-sample facts of one pipeline stage under a plan's sharding, for one tensor-parallel shard. */
export interface StageFacts {
  layers: LayerNode[];
  /** Layers the stage calls in each pass: all but the model's inputs. */
  layerCalls: number;
  /** FLOPs one shard computes per sample of its replica's micro-batch. */
  forwardFlops: number;
  backwardFlops: number;
  /** Trainable / non-trainable parameters one shard holds. */
  params: number;
  nonTrainableParams: number;
  /**
   * Trainable parameters of layers that ran batch-split inside the tensor-parallel group: their
   * gradients are summed over every device of the stage (dataParallel × tensorParallel), not only
   * over the replicas.
   */
  batchSplitParams: number;
  /** Bytes (fp32) of tensors entering from earlier stages and leaving to later stages, per sample. */
  liveInBytes: number;
  liveOutBytes: number;
  /**
   * Elements one shard keeps for the backward pass, per sample of the replica: tensors at the
   * activation precision, and dropout masks (engine/model/facts/kept.ts).
   */
  keptValues: number;
  keptMasks: number;
  /**
   * What tfjs itself holds (engine/model/facts/tape.ts), per sample of the replica: under one tape over
   * the whole stage (the sum of its layers'; the loss's too on the last stage), the one layer that holds
   * most when a pass runs layer by layer, and the layers' outputs a kept forward pass holds meanwhile.
   * `tapeFixed` does not grow with the batch.
   */
  tapeValues: number;
  largestTape: number;
  outputValues: number;
  tapeFixed: number;
  /** Tensor-parallel collectives per sample of the replica's micro-batch. */
  forwardCollectives: GroupCollective[];
  backwardCollectives: GroupCollective[];
}

/** Layers whose output is a view of their input's data (no buffer of their own). */
const VIEWS = new Set(['input', 'flatten', 'reshape']);

/**
 * The layout of a tensor over a stage replica's t devices, in SBP terms: S0 split along the batch,
 * S1 split along features, B whole on every device, P partial sums.
 */
type Layout = 'S0' | 'S1' | 'B' | 'P';

/**
 * Facts of stage `stage`, propagating layouts through its layers the way Whale and OneFlow do. The
 * stage input arrives batch-split over the tensor-parallel group, so layers that are not sharded run
 * as data parallel inside the group (1/t of the samples each). A layer whose weight is split needs its
 * input whole: the group all-gathers it (and reduce-scatters its gradient). Column-parallel layers
 * leave features split (S1); row-parallel ones leave partial sums (P) that are all-reduced unless the
 * plan keeps them. Anything that meets a layout it cannot consume gathers it to B first.
 */
export function stageFacts(model: ModelGraph, plan: Plan, stage: number): StageFacts {
  const ids = new Set(plan.stages[stage].layers);
  const byId = new Map(model.layers.map((l) => [l.id, l]));
  const t = plan.stages[stage].tensorParallel;
  const facts: StageFacts = {
    layers: [],
    layerCalls: 0,
    forwardFlops: 0,
    backwardFlops: 0,
    params: 0,
    nonTrainableParams: 0,
    batchSplitParams: 0,
    liveInBytes: 0,
    liveOutBytes: 0,
    keptValues: 0,
    keptMasks: 0,
    tapeValues: 0,
    largestTape: 0,
    outputValues: 0,
    tapeFixed: 0,
    forwardCollectives: [],
    backwardCollectives: [],
  };
  const layout = new Map<string, Layout>();
  const bytesOf = (id: string) => byId.get(id)?.activationBytes ?? 0;
  /** Keep a layer's tensors: its inputs, what it makes and its masks, each split over `inputs`/`rest` shards. */
  const keep = (layer: LayerNode, inputShare: number, restShare: number) => {
    facts.keptValues += layer.kept.inputs * inputShare + layer.kept.internal * restShare;
    facts.keptMasks += layer.kept.masks * restShare;
    const inputShapes = layer.inputs.map((id) => byId.get(id)?.outputShape ?? []);
    const tape = tapeElements(layer.spec, inputShapes, layer.outputShape, layer.kept, layer.params);
    // No gradient is taken of the data: a layer reading a model input does not compute one.
    const ofData = layer.inputs.filter((id) => byId.get(id)?.spec.kind === 'input').reduce((n, id) => n + product(byId.get(id)!.outputShape), 0);
    facts.tapeValues += Math.max(0, tape.perSample - ofData) * restShare;
    facts.largestTape = Math.max(facts.largestTape, tape.perSample * restShare);
    facts.tapeFixed += tape.fixed;
    // A reshape's output shares its input's data.
    if (!VIEWS.has(layer.spec.kind)) facts.outputValues += product(layer.outputShape) * restShare;
  };
  const inputLayout = (id: string): Layout => layout.get(id) ?? (t > 1 ? 'S0' : 'B');
  /** Bring an input to the whole (B) layout, recording the collective in both passes. */
  const gather = (id: string) => {
    const from = inputLayout(id);
    if (from === 'S0' || from === 'S1') {
      facts.forwardCollectives.push({ kind: 'allGather', bytes: bytesOf(id) });
      facts.backwardCollectives.push({ kind: 'reduceScatter', bytes: bytesOf(id) });
    } else if (from === 'P') {
      facts.forwardCollectives.push({ kind: 'allReduce', bytes: bytesOf(id) });
    }
    layout.set(id, 'B');
  };

  for (const layer of model.layers) {
    if (!ids.has(layer.id)) continue;
    facts.layers.push(layer);
    if (layer.spec.kind !== 'input') facts.layerCalls += 1;
    facts.nonTrainableParams += layer.nonTrainableParams;
    const sharding = t > 1 ? plan.sharding[layer.id] : undefined;
    const axis = sharding ? splitAxis(sharding.weight) : undefined;
    const weights = axis === undefined ? undefined : weightLayout(layer, byId.get(layer.inputs[0])?.outputShape ?? []);

    if (!weights || !sharding) {
      // Not sharded: run on whatever layout the inputs share; mixed or partial inputs are gathered.
      const layouts = new Set(layer.inputs.map(inputLayout));
      let own: Layout = layouts.size === 1 ? [...layouts][0] : 'B';
      if (own === 'P' || (own === 'S1' && layer.params > 0) || layouts.size > 1) {
        layer.inputs.forEach(gather);
        own = 'B';
      }
      if (layer.inputs.length === 0) own = t > 1 ? 'S0' : 'B';
      const share = own === 'B' ? 1 : 1 / t;
      facts.forwardFlops += layer.forwardFlops * share;
      facts.backwardFlops += layer.backwardFlops * share;
      keep(layer, share, share);
      facts.params += layer.params;
      if (own === 'S0' && t > 1) facts.batchSplitParams += layer.params;
      layout.set(layer.id, own);
      continue;
    }

    facts.forwardFlops += layer.forwardFlops / t;
    facts.backwardFlops += layer.backwardFlops / t;
    facts.params += layer.params / t;
    const input = layer.inputs[0];
    if (axis === weights.produced) {
      // Column-parallel: whole input, a slice of the outputs; the input gradient is a partial sum.
      if (inputLayout(input) !== 'B') gather(input);
      else facts.backwardCollectives.push({ kind: 'allReduce', bytes: bytesOf(input) });
      keep(layer, 1, 1 / t);
      let out: Layout = 'S1';
      if (sharding.output === 'B') {
        facts.forwardCollectives.push({ kind: 'allGather', bytes: layer.activationBytes });
        out = 'B';
      }
      // A class-sharded output layer feeds a sharded softmax cross-entropy: per-sample max and sum only.
      if (model.outputs.includes(layer.id)) facts.forwardCollectives.push({ kind: 'allReduce', bytes: 8 });
      layout.set(layer.id, out);
    } else {
      // Row-parallel: each device multiplies its slice of the input features; outputs are partial sums.
      if (inputLayout(input) === 'S0') gather(input);
      keep(layer, 1 / t, 1);
      let out: Layout = 'P';
      if (sharding.output !== 'P') {
        facts.forwardCollectives.push({ kind: 'allReduce', bytes: layer.activationBytes });
        out = 'B';
      }
      layout.set(layer.id, out);
    }
  }
  // The loss's backward reads the softmax of the logits: one more tensor of each output's size; under
  // tfjs's tape the loss's ops (softmax, log, the targets' one-hot, their gradients) hold about six.
  for (const id of model.outputs) {
    const split = inputLayout(id) === 'S0' || inputLayout(id) === 'S1';
    if (!ids.has(id)) continue;
    facts.keptValues += bytesOf(id) / 4 / (split ? t : 1);
    facts.tapeValues += (6 * bytesOf(id)) / 4 / (split ? t : 1);
  }
  // What crosses the cuts, as the agents send it: every tensor produced before a cut and read after
  // it, skip connections passing through a stage included (engine/model/stageCuts.ts).
  const cuts = stageCuts(model, plan.stages.map((st) => st.layers));
  const last = plan.stages.length - 1;
  if (stage > 0) facts.liveInBytes = cuts.incoming[stage].reduce((n, id) => n + bytesOf(id), 0);
  if (stage < last) facts.liveOutBytes = cuts.outgoing[stage].reduce((n, id) => n + bytesOf(id), 0);
  return facts;
}
