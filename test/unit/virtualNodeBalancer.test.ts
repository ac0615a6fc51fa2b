import { describe, expect, it } from 'vitest';
import { VirtualNodeBalancer } from '../../agents/coordinator/balancer.js';
import type { Message } from '../../engine/wire/frame.js';
import { zooModel } from '../../engine/model/zoo.js';
import { placements } from '../../engine/plan/placement.js';
import type { Plan } from '../../engine/plan/plan.js';
import { presetPlan } from '../../engine/plan/presets.js';
import { virtualNodesPerReplica } from '../../engine/plan/virtualNodes.js';
import { mulberry32 } from '../../engine/util/prng.js';

const mlp = zooModel('mlp');
const plan: Plan = { ...presetPlan(mlp, 'pp1-dp4'), virtualNodes: { total: 16 } };
const layout = placements(plan);
/** A step's replies: rank r computed for `ms[r]` milliseconds. */
const replies = (ms: number[]): Message[] => ms.map((computeMs, rank) => ({ header: { type: 'stepDone', rank, computeMs } }));

describe('re-balancing virtual nodes by measured speed', () => {
  it('waits for a few steps, then gives the slow half fewer virtual nodes', () => {
    const balancer = new VirtualNodeBalancer();
    // 4 virtual nodes each; ranks 2 and 3 take twice as long per virtual node.
    balancer.observe(plan, layout, replies([40, 40, 80, 80]));
    balancer.observe(plan, layout, replies([40, 40, 80, 80]));
    expect(balancer.proposal(plan)).toBeNull();
    balancer.observe(plan, layout, replies([40, 40, 80, 80]));
    const proposal = balancer.proposal(plan)!;
    expect(proposal.perReplica).toEqual([5, 5, 3, 3]);
    expect(proposal.beforeMs).toBeCloseTo(80);
    expect(proposal.afterMs).toBeCloseTo(60);
  });

  it('leaves equal speeds alone, and ignores gains under 10%', () => {
    const balancer = new VirtualNodeBalancer();
    for (let i = 0; i < 5; i++) balancer.observe(plan, layout, replies([40, 41, 39, 40]));
    expect(balancer.proposal(plan)).toBeNull();
  });

  it('follows speeds that drift, and starts over after reset', () => {
    const balancer = new VirtualNodeBalancer();
    for (let i = 0; i < 3; i++) balancer.observe(plan, layout, replies([40, 40, 40, 40]));
    expect(balancer.proposal(plan)).toBeNull();
    for (let i = 0; i < 4; i++) balancer.observe(plan, layout, replies([40, 40, 40, 120]));
    // The window's mean still holds the three even steps: rank 3 gives up half its share, not all.
    expect(balancer.proposal(plan)?.perReplica).toEqual([5, 5, 4, 2]);
    balancer.reset();
    expect(balancer.proposal(plan)).toBeNull();
  });

  it('does not flip-flop the remainder between equal replicas under noisy timings (4 virtual nodes on 3 replicas, 190 steps)', () => {
    const three: Plan = { ...presetPlan(mlp, 'pp1-dp3'), virtualNodes: { total: 4 } };
    const threeLayout = placements(three);
    const random = mulberry32(17);
    const balancer = new VirtualNodeBalancer();
    let current = three;
    let changes = 0;
    for (let step = 0; step < 190; step++) {
      const proposal = balancer.proposal(current);
      if (proposal) {
        balancer.applied(virtualNodesPerReplica(current), proposal.perReplica);
        current = { ...current, virtualNodes: { total: 4, perReplica: proposal.perReplica } };
        changes += 1;
      }
      // Equal replicas: 40 ms per virtual node, ±25% noise per step (a loaded machine).
      balancer.observe(current, threeLayout, replies(virtualNodesPerReplica(current).map((n) => n * 40 * (0.75 + 0.5 * random()))));
    }
    expect(changes).toBeLessThanOrEqual(2);
  });

  it('after a change it still follows a replica that becomes much slower', () => {
    const balancer = new VirtualNodeBalancer();
    for (let i = 0; i < 3; i++) balancer.observe(plan, layout, replies([40, 40, 80, 80]));
    const first = balancer.proposal(plan)!;
    balancer.applied([4, 4, 4, 4], first.perReplica);
    const moved: Plan = { ...plan, virtualNodes: { total: 16, perReplica: first.perReplica } };
    // Rank 0 now runs four times slower per virtual node; after the longer window it gives nodes away.
    for (let i = 0; i < 5; i++) balancer.observe(moved, layout, replies([5 * 160, 5 * 10, 3 * 20, 3 * 20]));
    expect(balancer.proposal(moved)).toBeNull();
    balancer.observe(moved, layout, replies([5 * 160, 5 * 10, 3 * 20, 3 * 20]));
    expect(balancer.proposal(moved)!.perReplica[0]).toBeLessThan(first.perReplica[0]);
  });
});
