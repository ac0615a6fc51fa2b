import type { IndexedJobEvent } from '../../../engine/protocol/events';
import type { StudioClient } from '../api/client';
import { connectStudio } from '../api/client';
import { applyEvents, emptyMetrics, isActive } from './metrics';
import { dismissAlert } from '../monitor/alerts';
import { presetPlan } from '../../../engine/plan/presets';
import type { ModelGraph } from '../../../engine/model/graph';
import type { Plan } from '../../../engine/plan/plan';
import type { JobSummary } from '../../../engine/protocol/studioApi';
import { clearPlan, loadPlan, useEditor } from '../editor/editorStore';
import { currentPlanState } from './planState';
import { useStudio } from './studioStore';
import type { PresetName } from './studioStore';
import { errorText } from './errorText';
import { dataForModel, dataRefOf } from './dataChoice';
import { EventSequence } from './eventSequence';

/**
 * The studio's actions: connect, open a model, start and stop a job, and fold live job events into the
 * store. Events are batched (a few flushes a second) so a fast job does not re-render per step, and
 * applied in the order of their index in the job's history, each once (EventSequence).
 */
let client: StudioClient | undefined;
const FLUSH_MS = 200;
let queue: Array<{ jobId: string; event: IndexedJobEvent }> = [];
let flushTimer: ReturnType<typeof setTimeout> | undefined;
/** The shown job's events applied so far; a new view starts a new one. */
let sequence = new EventSequence();
let backfilling = false;

function flush(): void {
  flushTimer = undefined;
  const { job, set } = useStudio.getState();
  // While the start request is in flight the job id is unknown: keep the events until it is.
  if (!job || !job.id) return;
  const ready = sequence.accept(queue.filter((q) => q.jobId === job.id).map((q) => q.event));
  queue = [];
  if (ready.length > 0) set({ job: { ...job, metrics: applyEvents(job.metrics, ready) } });
  if (sequence.hasGap) void backfill(job.id);
}

/** Live events arrived past a gap (the page subscribed late): fetch what lies between from the history. */
async function backfill(jobId: string): Promise<void> {
  if (!client || backfilling) return;
  backfilling = true;
  const filling = sequence;
  try {
    const missed = await client.jobEvents(jobId, filling.next);
    const job = useStudio.getState().job;
    if (filling !== sequence || job?.id !== jobId) return;
    const ready = sequence.accept(missed);
    if (ready.length > 0) useStudio.getState().set({ job: { ...job, metrics: applyEvents(job.metrics, ready) } });
  } catch {
    // The job is gone from the studio: there is nothing to fill.
  } finally {
    backfilling = false;
  }
}

function enqueue(jobId: string, event: IndexedJobEvent): void {
  queue.push({ jobId, event });
  flushTimer ??= setTimeout(flush, FLUSH_MS);
}

/** The connected studio API (undefined until initStudio connects): for views with calls of their own (runs, projects). */
export function studioClient(): StudioClient | undefined {
  return client;
}

export async function initStudio(): Promise<void> {
  const { set } = useStudio.getState();
  try {
    client = await connectStudio();
  } catch (error) {
    return set({ connection: { state: 'failed', message: errorText(error) } });
  }
  client.onDisconnect((reason) => set({ connection: { state: 'failed', message: `Disconnected: ${reason}.` } }));
  client.onJobEvent(enqueue);
  try {
    const [info, models] = await Promise.all([client.info(), client.listModels()]);
    // The default plan is the largest preset this machine's agents can run.
    const preset = info.defaultAgents >= 4 ? 'pp2-dp2' : info.defaultAgents >= 2 ? 'pp2-dp1' : 'pp1-dp1';
    set({ connection: { state: 'connected', shell: client.shell }, info, models, agents: info.defaultAgents, preset });
    const preferred = models.find((m) => m.name === 'mlp') ?? models[0];
    if (preferred) await selectModel(preferred.name);
    await reattach();
  } catch (error) {
    set({ connection: { state: 'failed', message: errorText(error) } });
  }
}

/** A job still running from before this page loaded: show it, with its history back-filled. */
async function reattach(): Promise<void> {
  if (!client) return;
  const running = (await client.listJobs()).filter((j) => isActive(j.state)).sort((a, b) => b.startedAt - a.startedAt)[0];
  if (!running) return;
  await showJobWithHistory(running, 'running plan');
}

/**
 * Show a job the studio already follows (re-attached after a reload or a restart) with its whole
 * history. The view has no id while the history is fetched, so that live events wait in the queue;
 * those already in the history are then dropped by index, the rest applied after it.
 */
export async function showJobWithHistory(summary: Pick<JobSummary, 'id' | 'model' | 'agents'> & Partial<Pick<JobSummary, 'schedule' | 'startedAt'>>, planLabel: string): Promise<void> {
  if (!client) return;
  const { set } = useStudio.getState();
  const view = { model: summary.model, planLabel, agents: summary.agents, schedule: summary.schedule, startedAt: summary.startedAt, metrics: emptyMetrics() };
  set({ job: view });
  const shown = (sequence = new EventSequence());
  const history = await client.jobEvents(summary.id, 0);
  if (useStudio.getState().job !== view || sequence !== shown) return;
  set({ job: { ...view, id: summary.id, metrics: applyEvents(view.metrics, sequence.accept(history)) } });
  // Live events that came while the history was fetched: those it held are dropped by their index.
  flush();
}

export async function selectModel(name: string): Promise<void> {
  if (!client) return;
  const { set } = useStudio.getState();
  set({ modelName: name, modelError: undefined });
  try {
    const model = await client.getModel(name);
    if (useStudio.getState().modelName !== name) return;
    set({ model, data: dataForModel(useStudio.getState().data, model) });
    loadPreset(model, useStudio.getState().preset, true);
  } catch (error) {
    set({ model: undefined, modelError: errorText(error) });
    clearPlan();
  }
}

/** Show a model that is not in the zoo (an imported model.json) under a picker key of its own, with a fresh preset plan. */
export function showModel(key: string, model: ModelGraph): void {
  useStudio.getState().set({ modelName: key, model, modelError: undefined, data: dataForModel(useStudio.getState().data, model) });
  loadPreset(model, useStudio.getState().preset, true);
}

/** Load a preset's plan into the editor; a preset that cannot cut this model says why. */
function loadPreset(model: ModelGraph, preset: PresetName, fresh: boolean): void {
  try {
    loadPlan(presetPlan(model, preset), preset, fresh);
  } catch (error) {
    if (fresh) clearPlan();
    useEditor.setState({ notice: { tone: 'refused', text: errorText(error) } });
  }
}

export function setPreset(preset: PresetName): void {
  useStudio.getState().set({ preset });
  const model = useStudio.getState().model;
  if (model) loadPreset(model, preset, false);
}

/** "Reset to preset": the current preset's plan, as an edit that Undo takes back. */
export function resetToPreset(): void {
  const { model, preset } = useStudio.getState();
  if (model) loadPreset(model, preset, false);
}

export async function startTraining(): Promise<void> {
  const state = useStudio.getState();
  if (!client || !state.model || (state.job && isActive(state.job.metrics.state))) return;
  const { plan, diagnostics } = currentPlanState(state.model, useEditor.getState().plan, state.cluster, state.agents);
  if (state.cluster !== 'local' || !plan || diagnostics.some((d) => d.severity === 'error')) return;
  const data = dataRefOf(state.data);
  if ('why' in data) return state.set({ actionError: data.why });
  const api = client;
  // A model opened from a file is named by where the studio stored it: that is what the agents read.
  const run = { ...plan, model: state.model.source?.modelFile ?? plan.model };
  const loss = state.data.loss || undefined;
  await launchJob(plan, state.agents, 'start training', () => api.startTraining({ plan: run, agents: state.agents, epochs: state.epochs, data: data.ref, loss }));
}

/**
 * Show a new job in the Monitor and start it with `start` (train here, or deploy): its events wait in
 * the queue until the id is known. Resolves with the job id, or undefined when it could not start.
 */
export async function launchJob(plan: Plan, agents: number, what: string, start: () => Promise<{ jobId: string }>, where = ''): Promise<string | undefined> {
  const state = useStudio.getState();
  if (!state.model) return undefined;
  const editor = useEditor.getState();
  queue = [];
  sequence = new EventSequence();
  const planLabel = `${editor.source}${editor.edited ? ' (edited)' : ''}${where}`;
  state.set({ actionError: undefined, job: { model: state.model.name, planLabel, agents, schedule: plan.schedule, plan, startedAt: Date.now(), metrics: emptyMetrics() } });
  try {
    const { jobId } = await start();
    const job = useStudio.getState().job;
    if (job) useStudio.getState().set({ job: { ...job, id: jobId } });
    flush();
    return jobId;
  } catch (error) {
    const job = useStudio.getState().job;
    const metrics = job ? { ...job.metrics, state: 'failed' as const, statusMessage: errorText(error) } : emptyMetrics();
    useStudio.getState().set({ actionError: `Could not ${what}: ${errorText(error)}`, job: job && { ...job, metrics } });
    return undefined;
  }
}

export async function stopTraining(): Promise<void> {
  const job = useStudio.getState().job;
  if (!client || !job?.id) return;
  try {
    await client.stopJob(job.id);
  } catch (error) {
    useStudio.getState().set({ actionError: `Could not stop the job: ${errorText(error)}` });
  }
}

/** Add agents to or release ranks of the running job; resolves true once the coordinator accepted it. */
export async function resizeJob(request: { add?: number; remove?: number[] }): Promise<boolean> {
  const job = useStudio.getState().job;
  if (!client || !job?.id) return false;
  try {
    useStudio.getState().set({ actionError: undefined });
    await client.resizeJob(job.id, request);
    return true;
  } catch (error) {
    useStudio.getState().set({ actionError: `Could not resize the job: ${errorText(error)}` });
    return false;
  }
}

/** Hide an alert of the current job (a later one of the same kind shows again). */
export function dismissJobAlert(id: string): void {
  const { job, set } = useStudio.getState();
  if (job) set({ job: { ...job, metrics: { ...job.metrics, alerts: dismissAlert(job.metrics.alerts, id) } } });
}
