import type { Plan } from '../../engine/plan/plan.js';
import { virtualNodesPerReplica } from '../../engine/plan/virtualNodes.js';
import type { VirtualNodeBalancer } from './balancer.js';
import { placedAgents, type Generations } from './generations.js';
import type { EventLog } from './eventLog.js';

/**
 * Give faster replicas more virtual nodes when that shortens the step enough (same ranks and links):
 * the balancer's proposal, applied before step `step`. Returns whether the plan changed.
 */
export async function rebalance(generations: Generations, balancer: VirtualNodeBalancer, log: EventLog, step: number): Promise<boolean> {
  const gen = generations.gen;
  const proposal = balancer.proposal(gen.plan);
  if (!proposal) return false;
  const plan: Plan = { ...gen.plan, virtualNodes: { total: proposal.perReplica.reduce((a, b) => a + b, 0), perReplica: proposal.perReplica } };
  await gen.ask({ type: 'remap', plan });
  balancer.applied(virtualNodesPerReplica(gen.plan), proposal.perReplica);
  gen.plan = plan;
  log.emit({
    type: 'membership',
    generation: gen.id,
    step,
    reason: `rebalance by measured speed: compute per step ${proposal.beforeMs.toFixed(0)} → ${proposal.afterMs.toFixed(0)} ms (predicted)`,
    agents: placedAgents(gen),
    ...generations.outside(),
  });
  return true;
}
