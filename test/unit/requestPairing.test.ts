import { describe, expect, it } from 'vitest';
import { presetPlan } from '../../engine/plan/presets.js';
import type { AgentRequest } from '../../engine/protocol/agentRequests.js';
import type { Connection } from '../../engine/wire/connection.js';
import { zooModel } from '../../engine/model/zoo.js';
import { Generation } from '../../agents/coordinator/generation.js';
import { Membership, type Member } from '../../agents/coordinator/membership.js';

/** A member whose connection records what the coordinator sends it. */
function member(id: number, sent: AgentRequest[]): Member {
  const conn = { send: (h: AgentRequest) => sent.push(h), closed: false, socket: { destroy() {} } } as unknown as Connection;
  return { id, conn, host: `local-${id}`, pid: 100 + id, peerHost: '127.0.0.1', peerPort: 0, backend: 'cpu', lastHeard: Date.now(), lost: null, onMessage: () => {} };
}

const stepDone = (requestId: number, rank: number, step: number) => ({ header: { type: 'stepDone' as const, requestId: requestId as never, rank, step, loss: 1, computeMs: 1, allReduceMs: 0 } });

describe('requests and replies', () => {
  it('are paired by request id: a late reply to an earlier request of the same step answers nothing', async () => {
    const sent: AgentRequest[][] = [[], []];
    const members = [member(0, sent[0]), member(1, sent[1])];
    const plan = presetPlan(zooModel('mlp'), 'pp1-dp2', { globalBatch: 8 });
    const old = new Generation(1, plan, members, new Membership(), 30, 1);
    void old.ask({ type: 'step', step: 5, timeline: false }).catch(() => {});
    const oldId = (sent[0][0] as { requestId: number }).requestId;
    old.close();

    const gen = new Generation(2, plan, members, new Membership(), 30, 1);
    let done = false;
    const replies = gen.ask({ type: 'step', step: 5, timeline: false }).then((r) => ((done = true), r));
    const id = (sent[0][1] as { requestId: number }).requestId;
    expect(id).not.toBe(oldId);
    expect((sent[1][1] as { requestId: number }).requestId).toBe(id);
    // Both survivors' replies to the discarded step arrive late: a string key "step:5" would have matched them.
    members.forEach((m, rank) => m.onMessage(stepDone(oldId, rank, 5)));
    await new Promise((r) => setImmediate(r));
    expect(done).toBe(false);
    members.forEach((m, rank) => m.onMessage(stepDone(id, rank, 5)));
    expect((await replies).map((m) => m.header.rank).sort()).toEqual([0, 1]);
    gen.close();
  });

  it('an asynchronous run answers each step with its own id', async () => {
    const sent: AgentRequest[] = [];
    const members = [member(0, sent)];
    const gen = new Generation(1, presetPlan(zooModel('mlp'), 'pp1-dp1', { globalBatch: 8 }), members, new Membership(), 30, 1);
    const replyTo = gen.askSteps({ type: 'asyncRun', fromStep: 10, toStep: 13, timelineEverySteps: 0 });
    const run = sent[0] as Extract<AgentRequest, { type: 'asyncRun' }>;
    // Steps report at their own pace, before the coordinator waits for them.
    for (const step of [10, 11, 12]) members[0].onMessage(stepDone(run.firstRequestId + step - 10, 0, step));
    for (const step of [10, 11, 12]) expect((await replyTo(step))[0].header.step).toBe(step);
    gen.close();
  });
});
