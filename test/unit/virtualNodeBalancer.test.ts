import { describe, expect, it } from 'vitest';
import { VirtualNodeBalancer } from '../../agents/coordinator/balancer.js';
import type { Message } from '../../engine/wire/frame.js';
import { zooModel } from '../../engine/model/zoo.js';
import { placements } from '../../engine/plan/placement.js';
import type { Plan } from '../../engine/plan/plan.js';
import { presetPlan } from '../../engine/plan/presets.js';

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
    expect(balancer.proposal(plan)?.perReplica).toEqual([5, 5, 5, 1]);
    balancer.reset();
    expect(balancer.proposal(plan)).toBeNull();
  });
});
