import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { zooModel } from '../../engine/model/zoo.js';
import type { OptimizerConfig, Plan } from '../../engine/plan/plan.js';
import { presetPlan } from '../../engine/plan/presets.js';
import type { JobEvent } from '../../engine/protocol/events.js';
import { LocalJob } from '../../engine/node/jobs/localJob.js';
import { readRun } from '../../engine/node/jobs/runHistory.js';
import { maxRelativeError, readParams } from './paramsFile.js';

/**
 * A coordinator that crashes in the middle of a job is restarted from the newest checkpoint
 * with new agents, and the job ends with the parameters of an uninterrupted run.
 */
const K = 16;
const model = zooModel('mlp');
const sgd: OptimizerConfig = { kind: 'sgd', learningRate: 0.05, momentum: 0.9 };
const plan: Plan = presetPlan(model, 'pp2-dp1', { optimizer: sgd });
let root: string;

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'shoal-crash-'));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

async function run(tag: string, during: (e: JobEvent, job: LocalJob) => void, restarts?: number, jobPlan = plan, steps = K, heartbeatTimeoutSec?: number): Promise<{ events: JobEvent[]; dir: string; error?: Error }> {
  const events: JobEvent[] = [];
  const dir = join(root, tag);
  const job: LocalJob = new LocalJob({
    model,
    plan: jobPlan,
    agents: 2,
    steps,
    runDir: dir,
    checkpointEverySteps: 4,
    evalEverySteps: steps,
    profile: false,
    timelineEverySteps: 0,
    coordinatorRestarts: restarts,
    heartbeatTimeoutSec,
    onEvent: (e) => {
      events.push(e);
      during(e, job);
    },
  });
  const error = await job.start().then(
    () => undefined,
    (err: Error) => err,
  );
  await job.exited();
  return { events, dir, error };
}

const stepsOf = (events: JobEvent[]) => events.flatMap((e) => (e.type === 'step' ? [e.step] : []));

describe('a crashed coordinator', () => {
  let uninterrupted: Map<string, Float32Array>;

  it('an uninterrupted run, for reference', async () => {
    const { dir, error } = await run('plain', () => {});
    expect(error).toBeUndefined();
    uninterrupted = readParams(join(dir, 'checkpoints'));
  });

  it('SIGKILL of the coordinator mid-job: restarted from the newest checkpoint, the job finishes with the same parameters', async () => {
    let killedAfter = -1;
    const { events, dir, error } = await run('killed', (e, job) => {
      if (killedAfter < 0 && e.type === 'step' && e.step === 9) {
        killedAfter = e.step;
        process.kill(job.coordinatorPid!, 'SIGKILL');
      }
    });
    expect(error).toBeUndefined();
    expect(killedAfter).toBe(9);
    const restart = events.find((e) => e.type === 'log' && /coordinator was killed after step \d+; restarting it from checkpoint step-0000008\.ckpt/.test(e.message));
    expect(restart, 'a log line names the checkpoint it resumes from').toBeDefined();
    expect(events.some((e) => e.type === 'checkpoint' && e.action === 'restored' && e.step === 8)).toBe(true);
    // Steps 8 and 9 ran twice (before the crash and after the restore); every step ran, the last once.
    const steps = stepsOf(events);
    expect(new Set(steps)).toEqual(new Set(Array.from({ length: K }, (_, i) => i)));
    expect(steps.slice(-(K - 8))).toEqual(Array.from({ length: K - 8 }, (_, i) => 8 + i));
    expect(events.at(-1)?.type === 'final' || events.some((e) => e.type === 'final')).toBe(true);
    // The job's clock goes on across the restart: elapsed time and the final seconds include the time before it.
    const restartAt = events.indexOf(restart!);
    const beforeCrash = Math.max(...events.slice(0, restartAt).flatMap((e) => (e.type === 'step' ? [e.elapsedMs] : [])));
    const firstAfter = events.slice(restartAt).find((e) => e.type === 'step') as Extract<JobEvent, { type: 'step' }>;
    expect(firstAfter.elapsedMs).toBeGreaterThan(beforeCrash);
    expect((events.find((e) => e.type === 'final') as Extract<JobEvent, { type: 'final' }>).seconds * 1000).toBeGreaterThan(beforeCrash);
    const params = readParams(join(dir, 'checkpoints'));
    for (const [name, values] of uninterrupted) expect(maxRelativeError(params.get(name)!, values), name).toBeLessThanOrEqual(1e-6);
    // The history on disk reads as one run: the re-run steps replace the ones before the crash.
    expect(readRun(dir.split('/').pop()!, undefined, root).curves.step).toEqual(Array.from({ length: K }, (_, i) => i));
    expect(readFileSync(join(dir, 'events.jsonl'), 'utf8')).toContain('"action":"restored"');
  });

  it('after a resize to 4 agents, the restarted coordinator resumes with 4, and the result is still one-process training', async () => {
    // Two virtual nodes: room for a second replica of the pipeline. Long enough for the new agents to
    // start and join however busy the machine is.
    const twoNodes: Plan = { ...plan, virtualNodes: { total: 2 } };
    const steps = 60;
    const reference = readParams(join((await run('resized-reference', () => {}, undefined, twoNodes, steps)).dir, 'checkpoints'));
    let resizeError: Error | undefined;
    let grownAt = -1;
    let killedAt = -1;
    const { events, dir, error } = await run(
      'resized',
      (e, job) => {
        if (e.type === 'step' && e.step === 1 && grownAt < 0 && !resizeError) job.resize({ add: 2 }).catch((err: Error) => (resizeError = err));
        if (e.type === 'membership' && e.agents.length === 4 && grownAt < 0) grownAt = e.step;
        // Once, two steps after the 4 agents took over (steps since the last checkpoint run again after the restart).
        if (grownAt >= 0 && killedAt < 0 && e.type === 'step' && e.step >= grownAt + 2) {
          killedAt = e.step;
          process.kill(job.coordinatorPid!, 'SIGKILL');
        }
      },
      undefined,
      twoNodes,
      steps,
    );
    expect(resizeError).toBeUndefined();
    expect(error).toBeUndefined();
    expect(killedAt, 'the coordinator was killed after the resize').toBeGreaterThan(grownAt);
    const generations = events.flatMap((e) => (e.type === 'membership' ? [{ reason: e.reason, agents: e.agents.length }] : []));
    expect(generations).toEqual([
      { reason: 'start', agents: 2 },
      { reason: 'resize: +2', agents: 4 },
      { reason: 'resumed from a checkpoint', agents: 4 },
    ]);
    expect(events.some((e) => e.type === 'log' && e.message.includes(`coordinator was killed after step ${killedAt}`))).toBe(true);
    const params = readParams(join(dir, 'checkpoints'));
    // Two replicas sum their gradients in another order than one process: equal up to rounding.
    for (const [name, values] of reference) expect(maxRelativeError(params.get(name)!, values), name).toBeLessThanOrEqual(1e-4);
  });

  it('a coordinator paused (SIGSTOP) for longer than its heartbeat timeout resumes the job: its own pause is not counted against the agents', async () => {
    let paused = false;
    const { events, dir, error } = await run(
      'paused',
      (e, job) => {
        if (!paused && e.type === 'step' && e.step === 5) {
          paused = true;
          const pid = job.coordinatorPid!;
          process.kill(pid, 'SIGSTOP');
          setTimeout(() => process.kill(pid, 'SIGCONT'), 16_000);
        }
      },
      undefined,
      plan,
      K,
      10,
    );
    expect(error).toBeUndefined();
    expect(paused).toBe(true);
    expect(events.some((e) => e.type === 'log' && /stopped answering|fenced/.test(e.message)), 'no agent was fenced').toBe(false);
    expect(events.filter((e) => e.type === 'membership')).toHaveLength(1);
    const params = readParams(join(dir, 'checkpoints'));
    for (const [name, values] of uninterrupted) expect(maxRelativeError(params.get(name)!, values), name).toBeLessThanOrEqual(1e-6);
  });

  it('with restarts turned off, the crash fails the job with a message that says so', async () => {
    let killed = false;
    const { error, events } = await run(
      'no-restart',
      (e, job) => {
        if (!killed && e.type === 'step' && e.step === 3) {
          killed = true;
          process.kill(job.coordinatorPid!, 'SIGKILL');
        }
      },
      0,
    );
    // Killed before its first checkpoint (every 4 steps): no resume is advised, there is nothing to resume from.
    expect(error?.message).toMatch(/The coordinator was killed while the job was running\. It wrote no checkpoint, so it has to start again/);
    expect(error?.message).not.toMatch(/shoal resume/);
    expect(events.some((e) => e.type === 'final')).toBe(false);
  });
});
