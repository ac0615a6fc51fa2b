import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { selectBackend } from '../../agents/backend/selectBackend.js';
import { tfjsReference } from '../support/tfjsReference.js';
import { zooModel } from '../../engine/model/zoo.js';
import { placements } from '../../engine/plan/placement.js';
import type { OptimizerConfig, Plan } from '../../engine/plan/plan.js';
import { presetPlan } from '../../engine/plan/presets.js';
import { planTeam } from '../../engine/plan/teamPlan.js';
import { virtualNodesPerReplica } from '../../engine/plan/virtualNodes.js';
import type { JobEvent } from '../../engine/protocol/events.js';
import { LocalJob } from '../../engine/node/jobs/localJob.js';
import { maxRelativeError, readParams } from './paramsFile.js';

/**
 * Every elastic move keeps every live agent busy. After a loss or a resize the new
 * generation holds every live agent, laid out as the planner (planTeam) lays out that many — stages,
 * replicas and virtual nodes — with the job's global batch and V virtual nodes, so the parameters
 * equal an uninterrupted run's; a resize resolves only once its agents train.
 */
const K = 10;
/**
 * Resizes are asked at step 1 and must be applied before the last step: a longer job, whose first
 * agents behave like devices ten times slower (sleeping, so load does not change the margin), so the
 * added agents' start-up never races the end of the job.
 */
const K_RESIZE = 30;
const SLOW = [10, 10, 10, 1, 1, 1];
/** Real agent processes on a shared 2-core machine: a job with a resize takes minutes under load. */
const JOB_TIMEOUT_MS = 480_000;
const model = zooModel('mlp');
const sgd: OptimizerConfig = { kind: 'sgd', learningRate: 0.05, momentum: 0.9 };
let root: string;
/** Parameters of an uninterrupted single-process run, after K and after K_RESIZE steps. */
const reference = new Map<number, Map<string, Float32Array>>();

beforeAll(async () => {
  await selectBackend();
  root = mkdtempSync(join(tmpdir(), 'shoal-elastic-team-'));
  for (const steps of [K, K_RESIZE]) reference.set(steps, (await tfjsReference(model, presetPlan(model, 'pp1-dp1', { optimizer: sgd }), steps)).params);
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

type Membership = Extract<JobEvent, { type: 'membership' }>;

/** A resize's outcome, handled at once (the job runs on while the test waits): 'applied' or the error's message. */
const outcome = (resize: Promise<void>) => resize.then(() => 'applied', (err: Error) => err.message);

/** Run `plan` for K steps on `agents`; `during` sees every event and may act on the job. */
async function run(tag: string, plan: Plan, agents: number, during: (e: JobEvent, job: LocalJob, events: JobEvent[]) => void, extra: Partial<ConstructorParameters<typeof LocalJob>[0]> = {}) {
  const events: JobEvent[] = [];
  const dir = join(root, tag);
  const steps = extra.steps ?? K;
  const job: LocalJob = new LocalJob({ model, plan, agents, steps, runDir: dir, evalEverySteps: steps, profile: false, timelineEverySteps: 0, ...extra, onEvent: (e) => {
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
/** Membership changes, not re-balances of the virtual nodes (noisy speeds on a busy machine may cause those). */
const generations = (events: JobEvent[]) => events.flatMap((e) => (e.type === 'membership' && !/rebalance/.test(e.reason) ? [e] : []));

function expectExact(got: Map<string, Float32Array>, steps = K): void {
  for (const [name, values] of reference.get(steps)!) expect(maxRelativeError(got.get(name)!, values), name).toBeLessThanOrEqual(1e-4);
}

function expectEveryStepOnce(events: JobEvent[], steps = K): void {
  expect(events.filter((e) => e.type === 'step').map((e) => e.type === 'step' && e.step)).toEqual(Array.from({ length: steps }, (_, i) => i));
}

/**
 * The generation holds `agents` agents, none waiting, laid out as planTeam lays out that many for the
 * job's plan: the same stage, replica and virtual nodes per rank.
 */
function expectTeamOf(generation: Membership, plan: Plan, agents: number): void {
  const { plan: expected, waitingReason } = planTeam(plan, model, agents);
  expect(waitingReason).toBeNull();
  expect(generation.waiting ?? []).toEqual([]);
  const vnodes = virtualNodesPerReplica(expected);
  expect(generation.agents.map((a) => [a.stage, a.replica, a.virtualNodes])).toEqual(placements(expected).map((p) => [p.stage, p.replica, vnodes[p.replica]]));
  expect(new Set(generation.agents.map((a) => a.pid)).size).toBe(agents);
}

describe('every elastic move keeps every live agent busy', () => {
  it('SIGKILL of one agent of pp2-dp2: the 3 survivors all train, re-planned, and the parameters match', async () => {
    const plan: Plan = { ...presetPlan(model, 'pp2-dp2', { optimizer: sgd }), virtualNodes: { total: 4 } };
    let killed = 0;
    const { events, params } = await run('kill-pp2-dp2', plan, 4, (e, _job, all) => {
      if (!killed && e.type === 'step' && e.step === 3) {
        // Rank 1: a stage-0 replica; its stage-1 partner survives and must not sit idle.
        killed = pidOf(all, 1);
        process.kill(killed, 'SIGKILL');
      }
    });
    expect(events.at(-1)?.type).toBe('final');
    expectEveryStepOnce(events);
    const changes = generations(events);
    expect(changes.map((g) => g.agents.length)).toEqual([4, 3]);
    expect(changes[1].reason).toMatch(/lost rank 1/);
    expect(changes[1].lost).toBe(1);
    expect(changes[1].agents.map((a) => a.pid)).not.toContain(killed);
    expectTeamOf(changes[1], plan, 3);
    expectExact(params);
  }, JOB_TIMEOUT_MS);

  for (const add of [1, 2]) {
    it(`adds ${add} agent(s) to a pp2-dp1 job: the resize resolves once all ${2 + add} train, and the parameters match`, async () => {
      const plan: Plan = { ...presetPlan(model, 'pp2-dp1', { optimizer: sgd }), virtualNodes: { total: 4 } };
      let resized: Promise<string> | undefined;
      const { events, params } = await run(`add-${add}-pp2-dp1`, plan, 2, (e, job) => {
        if (!resized && e.type === 'step' && e.step === 1) resized = outcome(job.resize({ add }));
      }, { agentSlowdowns: SLOW, rebalance: false, steps: K_RESIZE });
      expect(await resized).toBe('applied');
      expect(events.at(-1)?.type).toBe('final');
      expectEveryStepOnce(events, K_RESIZE);
      const changes = generations(events);
      expect(changes.map((g) => g.agents.length)).toEqual([2, 2 + add]);
      expect(changes[1].requestId).toBeDefined();
      expectTeamOf(changes[1], plan, 2 + add);
      expectExact(params, K_RESIZE);
    }, JOB_TIMEOUT_MS);
  }

  it('a resize that leaves agents waiting fails with the reason, and the agents that fit train', async () => {
    // One virtual node: one replica only, of at most 4 stages (the mlp's layers); 2 + 3 agents cannot all train.
    const plan: Plan = { ...presetPlan(model, 'pp2-dp1', { optimizer: sgd }), virtualNodes: { total: 1 } };
    let resized: Promise<string> | undefined;
    const { events } = await run('add-too-many', plan, 2, (e, job) => {
      if (!resized && e.type === 'step' && e.step === 1) resized = outcome(job.resize({ add: 3 }));
    }, { agentSlowdowns: SLOW, rebalance: false, steps: K_RESIZE });
    expect(await resized).toMatch(/applied the resize in generation 2 with 4 agent\(s\) training, but 1 wait \(.*\): no layout of the job uses all 5 agents .*at most 1, one per virtual node.*virtualNodes\.total/);
    expect(events.at(-1)?.type).toBe('final');
    const changes = generations(events);
    expect(changes.map((g) => g.agents.length)).toEqual([2, 4]);
    expect(changes[1].waiting).toHaveLength(1);
    expect(new Set(changes[1].agents.map((a) => a.stage)).size).toBe(4);
  }, JOB_TIMEOUT_MS);

  it('adds one agent to a dp3 job: four replicas share the eight virtual nodes, and the parameters match', async () => {
    const plan: Plan = { ...presetPlan(model, 'pp1-dp3', { optimizer: sgd }), virtualNodes: { total: 8 } };
    let resized: Promise<string> | undefined;
    const { events, params } = await run('add-dp3', plan, 3, (e, job) => {
      if (!resized && e.type === 'step' && e.step === 1) resized = outcome(job.resize({ add: 1 }));
    }, { agentSlowdowns: SLOW, rebalance: false, steps: K_RESIZE });
    expect(await resized).toBe('applied');
    expect(events.at(-1)?.type).toBe('final');
    expectEveryStepOnce(events, K_RESIZE);
    const changes = generations(events);
    expect(changes.map((g) => g.agents.length)).toEqual([3, 4]);
    expectTeamOf(changes[1], plan, 4);
    expect(changes[0].agents.map((a) => a.virtualNodes)).toEqual([3, 3, 2]);
    expect(changes[1].agents.map((a) => a.virtualNodes)).toEqual([2, 2, 2, 2]);
    expectExact(params, K_RESIZE);
  }, JOB_TIMEOUT_MS);
});
