import { closeSync, existsSync, openSync, readdirSync, readFileSync, readSync, statSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { localClusterSpec } from '../../cluster/cluster.js';
import { predictPlan } from '../../cost/predictPlan.js';
import { loadModel } from '../modelRef.js';
import type { Plan } from '../../plan/plan.js';
import { JobEventSchema, type JobEvent, type JobState } from '../../protocol/events.js';
import { JobProfileSchema } from '../../protocol/profile.js';
import { RunIdSchema, type RunDetail, type RunSummary } from '../../protocol/runs.js';
import { ownerAlive, readControlFile } from './controlFile.js';
import { runLockOwner } from './runLock.js';
import { DEPLOY_RECORD, readDeployRecord } from './deployRecord.js';
import { readRunMeta } from './runMeta.js';
import { runsRoot } from './runStore.js';
import { readRunRecord, type RunRecord } from './runRecord.js';
import { processAlive } from './processAlive.js';

export const EVENTS_FILE = 'events.jsonl';

/** The folder of run `id` under the runs root; the id is checked so that it cannot name anything else. */
export function runFolder(id: string, root = runsRoot()): string {
  const parsed = RunIdSchema.safeParse(id);
  if (!parsed.success || id === '.' || id === '..') throw new Error(`"${id}" is not a run id (a run's folder name under ${root}).`);
  const dir = join(root, id);
  if (!existsSync(join(dir, 'job.json'))) throw new Error(`No run "${id}" in ${root} (looked for ${join(dir, 'job.json')}).`);
  return dir;
}

function planLabel(plan: Plan): string {
  const stages = plan.stages.length;
  const replicas = Math.max(...plan.stages.map((s) => s.dataParallel));
  const shards = Math.max(...plan.stages.map((s) => s.tensorParallel ?? 1));
  const parts = [`${stages} stage${stages === 1 ? '' : 's'} × ${replicas} replica${replicas === 1 ? '' : 's'}`];
  if (shards > 1) parts[0] += ` × ${shards} shards`;
  parts.push(plan.schedule, `${plan.microBatches} micro-batch${plan.microBatches === 1 ? '' : 'es'}`, `batch ${plan.globalBatch}`);
  if (plan.zero) parts.push(`ZeRO ${plan.zero}`);
  return parts.join(', ');
}

/**
 * Runs written before the held-out data was named for what it is (a validation set) carry
 * `testAccuracy` / `testLoss` on their eval and final events: read them under today's names.
 */
export function upgradeLegacy(value: unknown): unknown {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return value;
  const event = value as Record<string, unknown>;
  if ((event.type !== 'eval' && event.type !== 'final') || !('testLoss' in event || 'testAccuracy' in event)) return value;
  const { testLoss, testAccuracy, ...rest } = event;
  return { ...rest, validationLoss: rest.validationLoss ?? testLoss, ...(testAccuracy === undefined || rest.validationAccuracy !== undefined ? {} : { validationAccuracy: testAccuracy }) };
}

/** Events of a JSON-lines file; a torn last line (the job was killed mid-write) and unknown lines are skipped. */
function parseEvents(text: string): JobEvent[] {
  const events: JobEvent[] = [];
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    try {
      const parsed = JobEventSchema.safeParse(upgradeLegacy(JSON.parse(line)));
      if (parsed.success) events.push(parsed.data);
    } catch {
      // A partial line: the rest of the history is still good.
    }
  }
  return events;
}

/** The last `bytes` of a file: enough for a summary (the final event, the last step) without reading a long history. */
function tail(file: string, bytes: number): string {
  const size = statSync(file).size;
  const fd = openSync(file, 'r');
  try {
    const length = Math.min(size, bytes);
    const buffer = Buffer.alloc(length);
    readSync(fd, buffer, 0, length, size - length);
    const text = buffer.toString('utf8');
    return length < size ? text.slice(text.indexOf('\n') + 1) : text;
  } finally {
    closeSync(fd);
  }
}

function lastOf<T extends JobEvent['type']>(events: JobEvent[], type: T): Extract<JobEvent, { type: T }> | undefined {
  for (let i = events.length - 1; i >= 0; i--) if (events[i].type === type) return events[i] as Extract<JobEvent, { type: T }>;
  return undefined;
}

/** A job another process runs (`shoal train` in a terminal): its run lock or control file is there and its owner alive. */
function runningElsewhere(dir: string): boolean {
  const owner = runLockOwner(dir);
  if (owner && owner.host === hostname() && processAlive(owner.pid)) return true;
  try {
    const control = readControlFile(dir);
    return !!control && ownerAlive(control);
  } catch {
    return false;
  }
}

/** A deployed run's hosts (deploy.json, head first), else this machine. */
function runHosts(dir: string): string[] {
  const file = join(dir, DEPLOY_RECORD);
  if (!existsSync(file)) return ['this machine'];
  try {
    const record = readDeployRecord(file);
    const hosts = record.hosts.map((h) => h.alias);
    return record.launcher === 'local' || hosts.length === 0 ? ['this machine'] : hosts;
  } catch {
    return ['this machine'];
  }
}

function summarize(id: string, dir: string, record: RunRecord, events: JobEvent[], live?: JobState): RunSummary {
  const final = lastOf(events, 'final');
  const status = lastOf(events, 'status');
  const lastStep = lastOf(events, 'step');
  const lastEval = lastOf(events, 'eval');
  const checkpoints = existsSync(join(dir, 'checkpoints')) ? readdirSync(join(dir, 'checkpoints')).filter((f) => /^step-\d+\.ckpt$/.test(f)).length : 0;
  let state: RunSummary['state'] = live ?? 'incomplete';
  if (!live) {
    if (final) state = 'finished';
    else if (status && (status.state === 'failed' || status.state === 'stopped')) state = status.state;
    else if (runningElsewhere(dir)) state = 'running';
  }
  const lastEvalOrFinal = final ?? lastEval;
  return {
    id,
    ...readRunMeta(dir),
    ...(record.dataset ? { dataset: record.dataset.name } : {}),
    hosts: runHosts(dir),
    durationMs: final ? final.seconds * 1000 : lastStep?.elapsedMs,
    finalLoss: lastStep?.loss,
    validationLoss: lastEvalOrFinal?.validationLoss,
    ...(lastEvalOrFinal?.metrics && Object.keys(lastEvalOrFinal.metrics).length ? { metrics: lastEvalOrFinal.metrics } : {}),
    createdAt: record.createdAt,
    model: record.model,
    agents: record.agents,
    steps: record.steps,
    planLabel: planLabel(record.plan),
    state,
    stepsDone: lastStep ? lastStep.step + 1 : 0,
    validationAccuracy: final?.validationAccuracy ?? lastEval?.validationAccuracy,
    checkpoints,
    hasHistory: existsSync(join(dir, EVENTS_FILE)),
  };
}


/** Every run folder under the root, newest first. `live` gives the state of runs this studio is running. */
export function listRuns(live: Map<string, JobState> = new Map(), root = runsRoot()): RunSummary[] {
  if (!existsSync(root)) return [];
  const runs: RunSummary[] = [];
  for (const id of readdirSync(root)) {
    const dir = join(root, id);
    if (!RunIdSchema.safeParse(id).success || !existsSync(join(dir, 'job.json'))) continue;
    try {
      const record = readRunRecord(dir);
      const eventsFile = join(dir, EVENTS_FILE);
      const events = existsSync(eventsFile) ? parseEvents(tail(eventsFile, 256 * 1024)) : [];
      runs.push(summarize(id, dir, record, events, live.get(id)));
    } catch {
      // An unreadable job.json (a run being created, a foreign folder) is not a run to list.
    }
  }
  return runs.sort((a, b) => b.createdAt.localeCompare(a.createdAt) || b.id.localeCompare(a.id));
}

const median = (xs: number[]): number | undefined => {
  if (!xs.length) return undefined;
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
};

/** Predicted step time of the run's plan on this machine: datasheet speeds, and calibrated by the run's profile. */
function predictions(dir: string, record: RunRecord): { predictedStepMs?: number; calibratedStepMs?: number } {
  try {
    const model = loadModel(record.model);
    const cluster = localClusterSpec(Math.max(record.agents, 1));
    const profileFile = join(dir, 'profile.json');
    const profile = existsSync(profileFile) ? JobProfileSchema.parse(JSON.parse(readFileSync(profileFile, 'utf8'))) : undefined;
    // The same pricing as the plan editor and the Monitor (engine/cost/predictPlan.ts).
    const { cost, calibrated } = predictPlan(record.plan, model, cluster, profile);
    return calibrated ? { predictedStepMs: cost.stepMs, calibratedStepMs: calibrated.stepMs } : { predictedStepMs: cost.stepMs };
  } catch {
    // A model or plan the cost model cannot price (an older format): show the measurements alone.
    return {};
  }
}

/** One run's curves, evaluations, plan and predicted vs measured step time, from its folder. */
export function readRun(id: string, live?: JobState, root = runsRoot()): RunDetail {
  const dir = runFolder(id, root);
  const record = readRunRecord(dir);
  const eventsFile = join(dir, EVENTS_FILE);
  const events = existsSync(eventsFile) ? parseEvents(readFileSync(eventsFile, 'utf8')) : [];
  const curves: RunDetail['curves'] = { step: [], epoch: [], loss: [], samplesPerSec: [], stepMs: [], elapsedMs: [] };
  const detail: RunDetail = { summary: summarize(id, dir, record, events, live), plan: record.plan, curves, evals: [], membership: [], ...(record.dataset ? { dataset: record.dataset } : {}) };
  for (const e of events) {
    if (e.type === 'step') {
      // A coordinator resumed from a checkpoint runs the steps since it again: the later ones count.
      const keep = curves.step.findIndex((s) => s >= e.step);
      if (keep >= 0) for (const series of Object.values(curves)) series.length = keep;
      curves.step.push(e.step);
      curves.epoch.push(e.epoch);
      curves.loss.push(e.loss);
      curves.samplesPerSec.push(e.samplesPerSec);
      curves.stepMs.push(e.stepMs);
      curves.elapsedMs.push(e.elapsedMs);
    } else if (e.type === 'eval') {
      const { type: _type, ...evaluation } = e;
      detail.evals.push(evaluation);
    }
    else if (e.type === 'membership') detail.membership.push({ step: e.step, generation: e.generation, reason: e.reason, agents: e.agents.length });
    else if (e.type === 'final') {
      const { type: _type, final: _final, epochs: _epochs, ...result } = e;
      detail.final = result;
    }
    else if (e.type === 'status' && (e.state === 'failed' || e.state === 'stopped') && e.message) detail.message = e.message;
  }
  detail.measuredStepMs = median(curves.stepMs.slice(Math.min(2, Math.max(0, curves.stepMs.length - 1))));
  return { ...detail, ...predictions(dir, record) };
}
