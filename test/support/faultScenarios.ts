import { mkdirSync, readFileSync, symlinkSync, chmodSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { JobEvent } from '../../engine/protocol/events.js';
import { CHECKPOINT_EVERY, STEPS, dp2, dp4, paramsDifference, paramsOf, pause, pidOf, pp2, runLocal, signal, startShoal, type FaultRun } from './faultJob.js';

/**
 * The fault-injection scenarios of README's "Failure model", each with what that model promises:
 * run by test/faults (CI asserts every promise) and by `npm run bench -- faults` (a table of outcomes,
 * recovery times and steps redone). One definition, so the suite and the table cannot drift apart.
 */
export interface FaultContext {
  /** A scratch folder of this suite: each scenario runs in its own sub-folder. */
  root: string;
  /**
   * The parameters of an uninterrupted run (run once, on first use). One serves every plan: with the
   * same 8 virtual nodes, dp4, dp2 and pp2 learn the same thing up to summation order.
   */
  reference: () => Promise<Map<string, Float32Array>>;
}

export interface FaultScenario {
  name: string;
  /** What the failure model says happens. */
  promise: string;
  run: (ctx: FaultContext) => Promise<FaultRun>;
  /** Where the run departs from the promise: empty when it behaved as the failure model says. */
  check: (run: FaultRun, ctx: FaultContext) => Promise<string[]>;
}

export function faultContext(root: string): FaultContext {
  let reference: Promise<Map<string, Float32Array>> | undefined;
  return {
    root,
    reference: () =>
      (reference ??= runLocal(join(root, 'reference'), dp2, 2).then((r) => {
        if (r.error) throw new Error(`The uninterrupted reference run failed: ${r.error.message}`);
        return paramsOf(r.dir);
      })),
  };
}

// ---- What a run did -------------------------------------------------------------------------------

const stepsOf = (r: FaultRun) => r.events.flatMap((e) => (e.type === 'step' ? [e.step] : []));
const logs = (r: FaultRun) => r.events.flatMap((e) => (e.type === 'log' ? [e.message] : []));
/** Membership changes (not re-balances of the virtual nodes, which a busy machine's noisy speeds may cause). */
const generations = (r: FaultRun) => r.events.flatMap((e) => (e.type === 'membership' && !/rebalance/.test(e.reason) ? [e.agents.length] : []));
const restored = (r: FaultRun) => r.events.flatMap((e) => (e.type === 'checkpoint' && e.action === 'restored' ? [e.step] : []));

/** Steps run more than once: re-reported after a fall-back, or discarded in flight after a loss. */
export function stepsRedone(r: FaultRun): number {
  const steps = stepsOf(r);
  const discarded = new Set(logs(r).flatMap((m) => /Discarding step (\d+)/.exec(m)?.[1] ?? []));
  return steps.length - new Set(steps).size + discarded.size;
}

/** Seconds from the first fault to the next completed step (for a pause, the pause is included). */
export function recoverySeconds(r: FaultRun): number | null {
  if (r.faultAt === undefined) return null;
  const i = r.events.findIndex((e, n) => e.type === 'step' && r.times[n] > r.faultAt!);
  return i < 0 ? null : (r.times[i] - r.faultAt) / 1000;
}

/** What a departing run said: its warnings and errors (the last `n`), and the end of its stderr. */
export function whatItSaid(r: FaultRun, n = 12): string {
  const said = r.events.flatMap((e) => (e.type === 'log' && e.level !== 'info' ? [`[${e.level} ${e.host}] ${e.message}`] : []));
  const status = r.events.flatMap((e) => (e.type === 'status' && e.state === 'failed' ? [`[failed] ${e.message ?? ''}`] : []));
  return [...said.slice(-n), ...status, ...(r.stderr ? [`stderr: ${r.stderr.slice(-2000)}`] : [])].join('\n');
}

/** One line on how the run ended. */
export function outcome(r: FaultRun): string {
  if (r.exitCode !== undefined && r.exitCode !== 0) return `exit ${r.exitCode}`;
  if (r.error) return 'failed';
  if (!r.events.some((e) => e.type === 'final')) return 'no final event';
  const back = restored(r);
  const sizes = generations(r);
  const agents = sizes.length > 1 && sizes[0] !== sizes.at(-1) ? `, ${sizes[0]} → ${sizes.at(-1)} agents` : '';
  return back.length ? `finished from checkpoint step ${back.at(-1)}${agents}` : `finished${agents}`;
}

// ---- What the failure model promises -------------------------------------------------------------

const finished = (r: FaultRun) => (r.error ? [`the job failed: ${r.error.message}`] : r.events.some((e) => e.type === 'final') ? [] : ['the job ended without a final event']);

function everyStepOnce(r: FaultRun): string[] {
  const steps = stepsOf(r).join(',');
  return steps === Array.from({ length: STEPS }, (_, i) => i).join(',') ? [] : [`steps reported were ${steps}, not each of 0..${STEPS - 1} once`];
}

async function sameParams(r: FaultRun, ctx: FaultContext): Promise<string[]> {
  // Replicas sum their gradients in another order when the membership changes: equal up to rounding.
  let got: Map<string, Float32Array>;
  try {
    got = paramsOf(r.dir);
  } catch (err) {
    return [(err as Error).message];
  }
  const d = paramsDifference(got, await ctx.reference());
  return d <= 1e-4 ? [] : [`parameters differ from the uninterrupted run by ${d.toExponential(2)} (relative)`];
}

const expectGenerations = (r: FaultRun, want: number[]) => (generations(r).join(' → ') === want.join(' → ') ? [] : [`agents per generation were ${generations(r).join(' → ')}, not ${want.join(' → ')}`]);
const endsWith = (r: FaultRun, agents: number) => (generations(r).at(-1) === agents ? [] : [`${generations(r).at(-1)} agents at the end, not ${agents}`]);
const says = (text: string, what: string, pattern: RegExp | string) => (typeof pattern === 'string' ? text.includes(pattern) : pattern.test(text)) ? [] : [`${what} does not say ${pattern}`];
const noFencing = (r: FaultRun) => (logs(r).some((m) => /stopped answering|fenced/.test(m)) ? ['an agent was fenced'] : []);

/** The job survives with every step once and the uninterrupted run's parameters, on `agents` generations. */
const survives = (agents: number[]) => async (r: FaultRun, ctx: FaultContext) => [...finished(r), ...everyStepOnce(r), ...expectGenerations(r, agents), ...(await sameParams(r, ctx))];

// ---- The scenarios --------------------------------------------------------------------------------

const dir = (ctx: FaultContext, name: string) => join(ctx.root, name);
const atStep = (n: number) => (e: JobEvent) => e.type === 'step' && e.step === n;

function agentPause(seconds: number, heartbeatTimeoutSec?: number): FaultScenario {
  const fenced = heartbeatTimeoutSec !== undefined && seconds > heartbeatTimeoutSec;
  return {
    name: `agent SIGSTOP ${seconds} s${heartbeatTimeoutSec ? ` (heartbeat timeout ${heartbeatTimeoutSec} s)` : ''}`,
    promise: fenced ? 'past the heartbeat timeout: fenced as lost, the other agent goes on, same parameters' : 'within the heartbeat timeout: waited for, no agent lost, same parameters',
    run: (ctx) =>
      runLocal(
        dir(ctx, `agent-stop-${seconds}`),
        dp2,
        2,
        (e, _job, run, inject) => {
          if (atStep(3)(e) && !run.faultAt) inject(() => pause(pidOf(run.events, 1), seconds));
        },
        { heartbeatTimeoutSec },
      ),
    check: async (r, ctx) =>
      fenced
        ? [...(await survives([2, 1])(r, ctx)), ...says(logs(r).join('\n'), 'the log', /stopped answering: no heartbeat for [\d.]+ s/)]
        : [...(await survives([2])(r, ctx)), ...noFencing(r)],
  };
}

function coordinatorPause(seconds: number): FaultScenario {
  return {
    name: `coordinator SIGSTOP ${seconds} s`,
    promise: 'its own pause is not counted against the agents: the job goes on, no agent lost, same parameters',
    run: (ctx) =>
      runLocal(dir(ctx, `coordinator-stop-${seconds}`), dp2, 2, (e, job, run, inject) => {
        if (atStep(3)(e) && !run.faultAt) inject(() => pause(job.coordinatorPid!, seconds));
      }),
    check: async (r, ctx) => [...(await survives([2])(r, ctx)), ...noFencing(r)],
  };
}

export const faultScenarios: FaultScenario[] = [
  {
    name: 'agent SIGKILL',
    promise: 'the step in flight is discarded, 3 agents go on, same parameters',
    run: (ctx) =>
      runLocal(dir(ctx, 'kill-one'), dp4, 4, (e, _job, run, inject) => {
        if (atStep(4)(e) && !run.faultAt) inject(() => signal(pidOf(run.events, 2), 'SIGKILL'));
      }),
    check: survives([4, 3]),
  },
  {
    name: 'two agents SIGKILLed at once',
    promise: 'replicas of every stage are left: 2 agents go on, same parameters',
    run: (ctx) =>
      runLocal(dir(ctx, 'kill-two'), dp4, 4, (e, _job, run, inject) => {
        if (!atStep(4)(e) || run.faultAt) return;
        inject(() => {
          signal(pidOf(run.events, 1), 'SIGKILL');
          signal(pidOf(run.events, 2), 'SIGKILL');
        });
      }),
    check: async (r, ctx) => [...finished(r), ...everyStepOnce(r), ...endsWith(r, 2), ...(await sameParams(r, ctx))],
  },
  {
    name: 'agent SIGKILL during recovery',
    promise: 'a loss while rescuing the survivors starts the rescue again: 2 agents go on, same parameters',
    run: (ctx) => {
      let second = false;
      return runLocal(dir(ctx, 'kill-in-recovery'), dp4, 4, (e, _job, run, inject) => {
        if (atStep(4)(e) && !run.faultAt) inject(() => signal(pidOf(run.events, 3), 'SIGKILL'));
        // The coordinator's first word on the loss: it is rescuing the survivors now.
        if (run.faultAt && !second && e.type === 'log' && /Discarding step \d+ and going on with 3 agent/.test(e.message)) {
          second = true;
          signal(pidOf(run.events, 0), 'SIGKILL');
        }
      });
    },
    check: async (r, ctx) => [...finished(r), ...everyStepOnce(r), ...endsWith(r, 2), ...(await sameParams(r, ctx))],
  },
  {
    name: 'last replica of a stage SIGKILLed (pp2)',
    promise: 'no copy of stage 1 is left: falls back to the newest checkpoint (step 4), re-plans onto 1 agent, same parameters',
    run: (ctx) =>
      runLocal(dir(ctx, 'kill-last-replica'), pp2, 2, (e, _job, run, inject) => {
        if (atStep(6)(e) && !run.faultAt) inject(() => signal(pidOf(run.events, 1), 'SIGKILL'));
      }),
    check: async (r, ctx) => [...finished(r), ...(restored(r).includes(CHECKPOINT_EVERY) ? [] : [`no restore from the step-${CHECKPOINT_EVERY} checkpoint (restored: ${restored(r).join(', ') || 'none'})`]), ...expectGenerations(r, [2, 1]), ...(await sameParams(r, ctx))],
  },
  agentPause(3),
  agentPause(8),
  agentPause(30, 20),
  coordinatorPause(3),
  coordinatorPause(8),
  coordinatorPause(30),
  {
    name: 'coordinator SIGKILL, newest checkpoint corrupt',
    promise: 'restarted from the newest valid checkpoint (step 4), the corrupt one skipped and reported, same parameters',
    run: (ctx) =>
      runLocal(dir(ctx, 'coordinator-kill-corrupt'), dp2, 2, (e, job, run, inject) => {
        if (e.type === 'checkpoint' && e.action === 'saved' && e.step === 2 * CHECKPOINT_EVERY && !run.faultAt) {
          // A bad disk or a copy cut short: one byte flipped near the end fails its checksum.
          const bytes = readFileSync(e.path);
          bytes[bytes.length - 100] ^= 0xff;
          writeFileSync(e.path, bytes);
        }
        if (atStep(2 * CHECKPOINT_EVERY + 1)(e) && !run.faultAt) inject(() => signal(job.coordinatorPid!, 'SIGKILL'));
      }),
    check: async (r, ctx) => {
      const corrupt = join(r.dir, 'checkpoints', `step-${String(2 * CHECKPOINT_EVERY).padStart(7, '0')}.ckpt`);
      const steps = stepsOf(r);
      return [
        ...finished(r),
        ...says(logs(r).join('\n'), 'the log', `Skipping checkpoint ${corrupt}: is corrupted or truncated`),
        ...(restored(r).at(-1) === CHECKPOINT_EVERY ? [] : [`restored from step ${restored(r).join(', ') || 'none'}, not ${CHECKPOINT_EVERY}`]),
        ...(steps.slice(-(STEPS - CHECKPOINT_EVERY)).join(',') === Array.from({ length: STEPS - CHECKPOINT_EVERY }, (_, i) => CHECKPOINT_EVERY + i).join(',') ? [] : [`steps after the restart were ${steps.join(',')}`]),
        ...(await sameParams(r, ctx)),
      ];
    },
  },
  {
    name: 'read-only checkpoint folder',
    promise: 'exit 1: no checkpoint could be written, naming the file and the OS error',
    run: async (ctx) => {
      const run = dir(ctx, 'read-only');
      const checkpoints = join(run, 'checkpoints');
      mkdirSync(run, { recursive: true });
      // Root writes through any mode bits: it gets a folder even it cannot write in (sysfs).
      if (process.getuid?.() === 0) symlinkSync('/sys/kernel', checkpoints);
      else {
        mkdirSync(checkpoints);
        chmodSync(checkpoints, 0o555);
      }
      // The folder holds something (the checkpoints folder): --overwrite lets the run use it.
      const args = ['train', '--model', 'mlp', '--cluster', 'local:1', '--steps', '2', '--checkpoint-every', '1', '--out', run, '--overwrite'];
      return startShoal(args, join(ctx.root, 'data'), run).exited;
    },
    check: async (r) => [
      ...(r.exitCode === 1 ? [] : [`exit ${r.exitCode}, not 1`]),
      ...says(r.stderr ?? '', 'stderr', `The checkpoint of step 2 could not be written, so this job's weights are not on disk: Cannot write checkpoint ${join(r.dir, 'checkpoints', 'step-0000002.ckpt')}`),
      ...says(r.stderr ?? '', 'stderr', /EACCES|EPERM|EROFS|not writable/),
    ],
  },
  {
    name: 'run folder deleted mid-run',
    promise: 'said at once in an error event; the final checkpoint has nowhere to go: exit 1 naming the missing folder',
    run: async (ctx) => {
      const run = dir(ctx, 'vanishing');
      const job = startShoal(['train', '--model', 'mlp', '--cluster', 'local:1', '--steps', '40', '--out', run], join(ctx.root, 'data'), run);
      await job.waitFor(atStep(1));
      job.run.faultAt = performance.now();
      rmSync(run, { recursive: true, force: true });
      return job.exited;
    },
    check: async (r) => [
      ...(r.exitCode === 1 ? [] : [`exit ${r.exitCode}, not 1`]),
      ...says(r.events.flatMap((e) => (e.type === 'log' && e.level === 'error' ? [e.message] : [])).join('\n'), 'the error events', `The run folder ${r.dir} was deleted while the job ran`),
      ...says(r.stderr ?? '', 'stderr', `the run folder ${r.dir} no longer exists`),
    ],
  },
  {
    name: 'two jobs on one --out',
    promise: 'the second is refused (exit 1) naming the owner; the first goes on undisturbed',
    run: async (ctx) => {
      const run = dir(ctx, 'shared-out');
      const data = join(ctx.root, 'data');
      const first = startShoal(['train', '--model', 'mlp', '--cluster', 'local:1', '--steps', '100000', '--out', run], data, run);
      await first.waitFor(atStep(1));
      const second = await startShoal(['train', '--model', 'mlp', '--cluster', 'local:1', '--steps', '2', '--out', run], data, run).exited;
      const next = Math.max(...stepsOf(first.run)) + 1;
      await first.waitFor(atStep(next));
      // Ctrl-C: the first job checkpoints and stops (exit 130).
      first.kill('SIGINT');
      return { ...second, other: await first.exited };
    },
    check: async (r) => {
      const first = r.other!;
      return [
        ...(r.exitCode === 1 ? [] : [`the second job exited ${r.exitCode}, not 1`]),
        ...says(r.stderr ?? '', "the second job's stderr", `Run folder ${r.dir} is in use by another job (pid ${first.pid} on `),
        ...(first.exitCode === 130 ? [] : [`the first job exited ${first.exitCode} after Ctrl-C, not 130: ${first.stderr}`]),
        ...(first.events.some((e) => e.type === 'checkpoint' && e.action === 'saved') ? [] : ['the first job saved no checkpoint on Ctrl-C']),
      ];
    },
  },
];
