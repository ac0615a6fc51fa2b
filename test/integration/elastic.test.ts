import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { selectBackend } from '../../agents/backend/selectBackend.js';
import { tfjsReference } from '../support/tfjsReference.js';
import { zooModel } from '../../engine/model/zoo.js';
import type { OptimizerConfig, Plan } from '../../engine/plan/plan.js';
import { presetPlan } from '../../engine/plan/presets.js';
import type { JobEvent } from '../../engine/protocol/events.js';
import { LocalJob } from '../../engine/node/jobs/localJob.js';
import { maxRelativeError, readParams } from './paramsFile.js';

/**
 * A job that loses or gains agents goes on without a restart and learns exactly what an
 * uninterrupted run learns: the global batch is 8 fixed virtual nodes, re-mapped onto whoever is
 * there; a step an agent died in is discarded (survivors undo it) and run again.
 */
const K = 12;
const model = zooModel('mlp');
const sgd: OptimizerConfig = { kind: 'sgd', learningRate: 0.05, momentum: 0.9 };
let root: string;
let reference: Map<string, Float32Array>;

beforeAll(async () => {
  await selectBackend();
  root = mkdtempSync(join(tmpdir(), 'shoal-elastic-'));
  reference = (await tfjsReference(model, presetPlan(model, 'pp1-dp1', { optimizer: sgd }), K)).params;
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

interface Run {
  events: JobEvent[];
  params: Map<string, Float32Array>;
}

/** Run `plan` for K steps; `during` sees every event and may act on the job (kill an agent, resize). */
async function run(tag: string, plan: Plan, agents: number, during: (e: JobEvent, job: LocalJob, events: JobEvent[]) => void, extra: Partial<ConstructorParameters<typeof LocalJob>[0]> = {}): Promise<Run> {
  const events: JobEvent[] = [];
  const dir = join(root, tag);
  const job: LocalJob = new LocalJob({ model, plan, agents, steps: K, runDir: dir, evalEverySteps: K, profile: false, timelineEverySteps: 0, ...extra, onEvent: (e) => {
    events.push(e);
    during(e, job, events);
  } });
  await job.start();
  await job.exited();
  return { events, params: readParams(join(dir, 'checkpoints')) };
}

const pidOf = (events: JobEvent[], rank: number) => {
  const e = events.find((x) => x.type === 'agent' && x.rank === rank);
  if (e?.type !== 'agent') throw new Error(`no agent event for rank ${rank}`);
  return e.pid;
};

function expectExact(got: Map<string, Float32Array>): void {
  for (const [name, values] of reference) expect(maxRelativeError(got.get(name)!, values), name).toBeLessThanOrEqual(1e-4);
}

/** Every step reported exactly once, in order: none lost, none done twice. */
function expectEveryStepOnce(events: JobEvent[]): void {
  expect(events.filter((e) => e.type === 'step').map((e) => e.type === 'step' && e.step)).toEqual(Array.from({ length: K }, (_, i) => i));
}

const memberships = (events: JobEvent[]) => events.flatMap((e) => (e.type === 'membership' ? [e] : []));
/** Membership changes (not re-balances of the virtual nodes, which noisy speeds on a busy machine may cause). */
const generations = (events: JobEvent[]) => memberships(events).filter((g) => !/rebalance/.test(g.reason));

describe('elastic data parallelism with virtual nodes', () => {
  const plan: Plan = { ...presetPlan(model, 'pp1-dp4', { optimizer: sgd }), virtualNodes: { total: 8 } };

  it('SIGKILL of an agent mid-run: the step is discarded, 3 agents go on, parameters equal an uninterrupted run', async () => {
    let killed = false;
    const { events, params } = await run('sigkill', plan, 4, (e, _job, all) => {
      if (!killed && e.type === 'step' && e.step === 4) {
        killed = true;
        process.kill(pidOf(all, 2), 'SIGKILL');
      }
    });
    expect(events.at(-1)?.type).toBe('final');
    expectEveryStepOnce(events);
    const changes = generations(events);
    expect(changes.map((g) => g.agents.length)).toEqual([4, 3]);
    expect(changes[1].reason).toMatch(/lost rank 2/);
    expect(changes[1].agents.map((a) => a.virtualNodes)).toEqual([3, 3, 2]);
    expectExact(params);
  });

  it('two agents SIGKILLed at once: the job goes on with the 2 left, parameters equal an uninterrupted run', async () => {
    let killed = false;
    const { events, params } = await run('double-kill', plan, 4, (e, _job, all) => {
      if (!killed && e.type === 'step' && e.step === 4) {
        killed = true;
        process.kill(pidOf(all, 1), 'SIGKILL');
        process.kill(pidOf(all, 2), 'SIGKILL');
      }
    });
    expect(events.at(-1)?.type).toBe('final');
    expectEveryStepOnce(events);
    const changes = generations(events);
    expect(changes[0].agents).toHaveLength(4);
    expect(changes.at(-1)!.agents).toHaveLength(2);
    expect(changes.at(-1)!.agents.map((a) => a.virtualNodes)).toEqual([4, 4]);
    expectExact(params);
  });

  it('an agent lost while the job recovers from another loss: it goes on with those left', async () => {
    let first = false;
    let second = false;
    const { events, params } = await run('loss-in-recovery', plan, 4, (e, _job, all) => {
      if (!first && e.type === 'step' && e.step === 4) {
        first = true;
        process.kill(pidOf(all, 3), 'SIGKILL');
      }
      // The coordinator's first word on the loss: it is rescuing the survivors now.
      if (first && !second && e.type === 'log' && /Discarding step \d+ and going on with 3 agent/.test(e.message)) {
        second = true;
        process.kill(pidOf(all, 0), 'SIGKILL');
      }
    });
    expect(second).toBe(true);
    expect(events.at(-1)?.type).toBe('final');
    expectEveryStepOnce(events);
    expect(generations(events).at(-1)!.agents).toHaveLength(2);
    expectExact(params);
  });

  it('an agent that stops answering (SIGSTOP) is fenced after the heartbeat timeout and the job goes on', async () => {
    let stopped = false;
    const { events, params } = await run('sigstop', plan, 4, (e, _job, all) => {
      if (!stopped && e.type === 'step' && e.step === 3) {
        stopped = true;
        process.kill(pidOf(all, 1), 'SIGSTOP');
      }
    });
    expect(events.at(-1)?.type).toBe('final');
    expectEveryStepOnce(events);
    expect(generations(events).map((g) => g.agents.length)).toEqual([4, 3]);
    expect(events.some((e) => e.type === 'log' && /stopped answering: no heartbeat/.test(e.message))).toBe(true);
    expectExact(params);
  });

  it('grows from 2 to 4 agents without a restart, keeping step, optimizer state and data order', async () => {
    const small: Plan = { ...presetPlan(model, 'pp1-dp2', { optimizer: sgd }), virtualNodes: { total: 8 } };
    let asked = false;
    // Two agents must start and join before the job's last step: asked early, with every agent taking
    // three times as long per pass (sleeping, so the added ones start as fast), the join never races
    // the end of a 12-step job on a fast or a busy machine. Speeds are equal: no re-balance to wait for.
    const { events, params } = await run('grow', small, 2, (e, job) => {
      if (!asked && e.type === 'step' && e.step === 1) {
        asked = true;
        job.resize({ add: 2 }).catch((err) => console.error(err));
      }
    }, { agentSlowdowns: [3, 3, 3, 3], rebalance: false });
    expect(events.at(-1)?.type).toBe('final');
    expectEveryStepOnce(events);
    const changes = generations(events);
    expect(changes.map((g) => g.agents.length)).toEqual([2, 4]);
    expect(changes[1].agents.map((a) => a.virtualNodes)).toEqual([2, 2, 2, 2]);
    // Parameters and momentum went from the agent holding them to every member, not via the coordinator.
    expect(peerRestores(events).map((e) => e.message)).toHaveLength(4);
    expect(logs(events).some((m) => /State handed over peer to peer: [\d.]+ MiB from 1 holder\(s\) to 4 agent\(s\)/.test(m))).toBe(true);
    expectExact(params);
  });

  it('shrinks a two-stage pipeline onto one agent: its one stage fetches from both stages\' holders', async () => {
    const pipeline: Plan = { ...presetPlan(model, 'pp2-dp1', { optimizer: sgd }), virtualNodes: { total: 2 } };
    let asked = false;
    const { events, params } = await run('shrink-stages', pipeline, 2, (e, job) => {
      if (!asked && e.type === 'step' && e.step === 5) {
        asked = true;
        job.resize({ remove: [1] }).catch((err) => console.error(err));
      }
    });
    expect(events.at(-1)?.type).toBe('final');
    expectEveryStepOnce(events);
    expect(generations(events).map((g) => g.agents.length)).toEqual([2, 1]);
    const restores = peerRestores(events);
    expect(restores).toHaveLength(1);
    expect(restores[0].message).toMatch(/from peer\(s\) 127\.0\.0\.1:\d+, 127\.0\.0\.1:\d+$/);
    expect(logs(events).some((m) => /from 2 holder\(s\) to 1 agent\(s\)/.test(m))).toBe(true);
    expectExact(params);
  });
});

const logs = (events: JobEvent[]) => events.flatMap((e) => (e.type === 'log' ? [e.message] : []));
const peerRestores = (events: JobEvent[]) => events.flatMap((e) => (e.type === 'log' && /restored \d+ tensors \([\d.]+ MiB\) from peer\(s\)/.test(e.message) ? [e] : []));

describe('losing the last replica of a stage', () => {
  it('falls back to the last checkpoint, re-plans onto the remaining device, and still matches', async () => {
    const plan: Plan = { ...presetPlan(model, 'pp2-dp1', { optimizer: sgd }), virtualNodes: { total: 2 } };
    let killed = false;
    const { events, params } = await run('fallback', plan, 2, (e, _job, all) => {
      if (!killed && e.type === 'step' && e.step === 6) {
        killed = true;
        process.kill(pidOf(all, 1), 'SIGKILL');
      }
    }, { checkpointEverySteps: 4 });
    expect(events.at(-1)?.type).toBe('final');
    expect(events.some((e) => e.type === 'checkpoint' && e.action === 'restored' && e.step === 4)).toBe(true);
    const changes = generations(events);
    expect(changes.map((g) => g.agents.length)).toEqual([2, 1]);
    expect(changes[1].step).toBe(4);
    expectExact(params);
  });
});

describe('heterogeneous devices', () => {
  it('moves virtual nodes to the faster replica by measured speed, and the mathematics does not change', async () => {
    const plan: Plan = { ...presetPlan(model, 'pp1-dp2', { optimizer: sgd }), virtualNodes: { total: 8 } };
    // Agent 1 behaves like a device 3× slower than agent 0.
    const { events, params } = await run('hetero', plan, 2, () => {}, { agentSlowdowns: [1, 3] });
    expect(events.at(-1)?.type).toBe('final');
    expectEveryStepOnce(events);
    const all = memberships(events);
    expect(all[0].agents.map((a) => a.virtualNodes)).toEqual([4, 4]);
    const rebalanced = all.find((g) => /rebalance/.test(g.reason));
    expect(rebalanced, 'a re-balance by speed').toBeDefined();
    // Ranks follow the order agents joined in; the slowed one is the agent started second (local-1).
    const share = (host: string) => rebalanced!.agents.find((a) => a.host === host)!.virtualNodes;
    const [fast, slow] = [share('local-0'), share('local-1')];
    expect(fast).toBeGreaterThan(slow);
    expect(fast + slow).toBe(8);
    expectExact(params);
  });
});
