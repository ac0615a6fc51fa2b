import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { zooModel } from '../../engine/model/zoo.js';
import type { OptimizerConfig, Plan } from '../../engine/plan/plan.js';
import { presetPlan } from '../../engine/plan/presets.js';
import { JobEventSchema, type JobEvent } from '../../engine/protocol/events.js';
import { LocalJob, type LocalJobOptions } from '../../engine/node/jobs/localJob.js';
import { latestCheckpoint } from '../../engine/node/jobs/runStore.js';
import { readCheckpoint } from '../../engine/wire/checkpointFile.js';

/**
 * How the fault-injection scenarios (faultScenarios.ts) run a job and watch it: in-process LocalJobs
 * (real coordinator and agent processes, whose pids the events name) for process faults, the real
 * `shoal train` command for run-folder faults (its exit code and message are what a user sees).
 * Faults are injected from the job's own event stream, never after a guessed delay.
 */

/** Steps of every in-process scenario, and its checkpoint interval (step 4 and 8 are saved mid-job). */
export const STEPS = 12;
export const CHECKPOINT_EVERY = 4;
export const model = zooModel('mlp');
const sgd: OptimizerConfig = { kind: 'sgd', learningRate: 0.05, momentum: 0.9 };
/**
 * Eight fixed virtual nodes make the global batch independent of how many agents hold it: a job that
 * loses replicas still learns exactly what an uninterrupted one does (up to summation order).
 */
export const dp4: Plan = { ...presetPlan(model, 'pp1-dp4', { optimizer: sgd }), virtualNodes: { total: 8 } };
/** The same global batch on two replicas (4 virtual nodes each): fewer processes, the same mathematics. */
export const dp2: Plan = { ...presetPlan(model, 'pp1-dp2', { optimizer: sgd }), virtualNodes: { total: 8 } };
/** Two stages, one replica each: losing either agent loses the only copy of its stage. */
export const pp2: Plan = { ...presetPlan(model, 'pp2-dp1', { optimizer: sgd }), virtualNodes: { total: 2 } };

export interface FaultRun {
  events: JobEvent[];
  /** performance.now() when each event arrived. */
  times: number[];
  /** performance.now() of the first fault injected (undefined: none was). */
  faultAt?: number;
  /** In-process jobs: why the job failed (undefined: it finished). */
  error?: Error;
  /** `shoal` runs: exit code and standard error. */
  exitCode?: number | null;
  stderr?: string;
  /** The run folder. */
  dir: string;
  /** `shoal` runs: the process id. */
  pid?: number;
  /** Another job of the same scenario (the first of two on one run folder). */
  other?: FaultRun;
}

let latest: FaultRun | undefined;
/** The run started last (a test that timed out says what it had heard so far). */
export const latestRun = () => latest;

/** Sees each event of a job; `inject(fault)` does the fault now and notes when (the first one's time is kept). */
export type Injector = (e: JobEvent, job: LocalJob, run: FaultRun, inject: (fault: () => void) => void) => void;

/** Run a LocalJob for STEPS steps in `dir`; `during` sees every event and injects the faults. */
export async function runLocal(dir: string, plan: Plan, agents: number, during: Injector = () => {}, extra: Partial<LocalJobOptions> = {}): Promise<FaultRun> {
  const run: FaultRun = (latest = { events: [], times: [], dir });
  const inject = (fault: () => void) => {
    run.faultAt ??= performance.now();
    fault();
  };
  const job: LocalJob = new LocalJob({
    model,
    plan,
    agents,
    steps: STEPS,
    runDir: dir,
    checkpointEverySteps: CHECKPOINT_EVERY,
    evalEverySteps: STEPS,
    profile: false,
    timelineEverySteps: 0,
    ...extra,
    onEvent: (e) => {
      run.events.push(e);
      run.times.push(performance.now());
      during(e, job, run, inject);
    },
  });
  run.error = await job.start().then(
    () => undefined,
    (err: Error) => err,
  );
  await job.exited();
  return run;
}

/** Stop `pid` (SIGSTOP) for `seconds`, then let it go on (SIGCONT); a process gone by then is ignored. */
export function pause(pid: number, seconds: number): void {
  process.kill(pid, 'SIGSTOP');
  setTimeout(() => signal(pid, 'SIGCONT'), seconds * 1000).unref();
}

export function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // Already gone (the job ended or fenced it): nothing left to signal.
  }
}

/** The pid of the agent that holds `rank` first (from its `agent` event). */
export function pidOf(events: JobEvent[], rank: number): number {
  const e = events.find((x) => x.type === 'agent' && x.rank === rank);
  if (e?.type !== 'agent') throw new Error(`no agent event for rank ${rank}`);
  return e.pid;
}

/** A running `shoal train`: its events as they come, and its end. */
export interface ShoalProcess {
  pid: number;
  run: FaultRun;
  /** Resolves once an event satisfies `predicate` (rejects if the process ends first). */
  waitFor(predicate: (e: JobEvent) => boolean): Promise<JobEvent>;
  exited: Promise<FaultRun>;
  kill(signal: NodeJS.Signals): void;
}

// Not __dirname: the benchmark runs this file as an ES module (tsx).
const repo = fileURLToPath(new URL('../..', import.meta.url));

/** Start the real CLI: `node bin/shoal.cjs <args> --json`, with its own SHOAL_DATA_DIR. */
export function startShoal(args: string[], dataDir: string, dir: string): ShoalProcess {
  const child = spawn(process.execPath, [join(repo, 'bin', 'shoal.cjs'), ...args, '--json'], { cwd: repo, env: { ...process.env, SHOAL_DATA_DIR: dataDir } });
  const run: FaultRun = (latest = { events: [], times: [], dir, stderr: '', pid: child.pid });
  const waiters = new Set<{ predicate: (e: JobEvent) => boolean; resolve: (e: JobEvent) => void; reject: (err: Error) => void }>();
  let partial = '';
  child.stdout.on('data', (d: Buffer) => {
    const lines = (partial + d.toString()).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines.filter((l) => l.startsWith('{'))) {
      const e = JobEventSchema.parse(JSON.parse(line));
      run.events.push(e);
      run.times.push(performance.now());
      for (const w of waiters) {
        if (!w.predicate(e)) continue;
        waiters.delete(w);
        w.resolve(e);
      }
    }
  });
  child.stderr.on('data', (d: Buffer) => (run.stderr += d.toString()));
  const exited = new Promise<FaultRun>((resolve) =>
    child.once('close', (code) => {
      run.exitCode = code;
      for (const w of waiters) w.reject(new Error(`shoal ${args[0]} exited (${code}) first: ${run.stderr}`));
      resolve(run);
    }),
  );
  return {
    pid: child.pid!,
    run,
    exited,
    kill: (name) => child.kill(name),
    waitFor: (predicate) => {
      const seen = run.events.find(predicate);
      if (seen) return Promise.resolve(seen);
      if (run.exitCode !== undefined) return Promise.reject(new Error(`shoal ${args[0]} already exited (${run.exitCode}): ${run.stderr}`));
      return new Promise((resolve, reject) => waiters.add({ predicate, resolve, reject }));
    },
  };
}

/** The parameters (not optimizer slots) of the newest intact checkpoint in a run folder: name → values. */
export function paramsOf(dir: string): Map<string, Float32Array> {
  const file = latestCheckpoint(join(dir, 'checkpoints'));
  if (!file) throw new Error(`No checkpoint in ${dir}`);
  const { header, body } = readCheckpoint(file);
  return new Map(header.tensors.filter((t) => !t.slot).map((t) => [t.name, body.slice(t.offset, t.offset + t.length)]));
}

/** The largest difference between two parameter sets, relative to each tensor's largest magnitude. */
export function paramsDifference(got: Map<string, Float32Array>, want: Map<string, Float32Array>): number {
  let worst = 0;
  for (const [name, expected] of want) {
    const actual = got.get(name);
    if (!actual || actual.length !== expected.length) return Infinity;
    let diff = 0;
    let scale = 0;
    for (let i = 0; i < expected.length; i++) {
      diff = Math.max(diff, Math.abs(actual[i] - expected[i]));
      scale = Math.max(scale, Math.abs(expected[i]));
    }
    worst = Math.max(worst, diff / Math.max(scale, 1e-12));
  }
  return worst;
}
