import { create } from 'zustand';
import type { DeployedJobSummary, DeployStatus, DeployTarget } from '../../../engine/protocol/deploy';
import { agentsNeeded } from '../../../engine/plan/plan';
import { launchJob, showJobWithHistory, stopTraining, studioClient } from '../store/actions';
import { currentPlanState } from '../store/planState';
import { dataRefOf } from '../store/dataChoice';
import { useStudio } from '../store/studioStore';
import type { JobView } from '../store/studioStore';
import { useEditor } from '../editor/editorStore';
import { errorText } from '../store/errorText';

/**
 * Deploying from the studio: where to (This machine, detached, or a stored SSH cluster), the deploy's
 * per-host progress — polled while hosts are prepared, because it may stop to ask the user to trust an
 * unknown host key — and the deployed jobs found in the run folders, to re-attach to after a restart.
 */
interface DeployState {
  /** `local` or a stored cluster's name. */
  target: string;
  /** Skip the native GPU backend on GPU hosts (agents use wasm): for hosts that cannot reach npm. */
  noGpu: boolean;
  /** The deploy (or re-attach) being shown; its rows stay after it is done, until dismissed. */
  status?: DeployStatus;
  jobs?: DeployedJobSummary[];
  loadingJobs: boolean;
  error?: string;
}

export const useDeploy = create<DeployState>()(() => ({ target: 'local', noGpu: false, loadingJobs: false }));

const POLL_MS = 300;
let polling: ReturnType<typeof setTimeout> | undefined;
/** The run on show before the current deploy: back on show if the deploy fails before any agent started. */
let shownBefore: { jobId: string; job: JobView | undefined } | undefined;

const inProgress = (s: DeployStatus) => s.phase === 'preparing' || s.phase === 'starting' || s.phase === 'attaching';

export function setDeployTarget(target: string): void {
  useDeploy.setState({ target });
}

export function setNoGpu(noGpu: boolean): void {
  useDeploy.setState({ noGpu });
}

async function poll(jobId: string): Promise<void> {
  const client = studioClient();
  if (!client) return;
  try {
    const status = await client.deployStatus(jobId);
    if (useDeploy.getState().status?.jobId !== jobId) return;
    useDeploy.setState({ status });
    if (status.phase === 'failed') restoreShownRun(jobId, status);
    if (inProgress(status)) polling = setTimeout(() => void poll(jobId), POLL_MS);
    // A deploy that got as far as a job shows up in the list of jobs on clusters.
    else void refreshDeployedJobs();
  } catch (error) {
    useDeploy.setState({ error: errorText(error) });
  }
}

function follow(jobId: string, cluster: string, phase: DeployStatus['phase']): void {
  clearTimeout(polling);
  useDeploy.setState({ status: { jobId, cluster, phase, hosts: [], trust: [] }, error: undefined });
  void poll(jobId);
}

/**
 * A deploy that failed before any agent started has nothing to show: the Monitor goes back to the run
 * it showed before (its charts were never this job's), and the status line says the deploy failed in
 * one line — each host's error is in its own row of the deploy progress, once.
 */
function restoreShownRun(jobId: string, status: DeployStatus): void {
  const before = shownBefore?.jobId === jobId ? shownBefore : undefined;
  shownBefore = undefined;
  const { job, set } = useStudio.getState();
  if (!before || job?.id !== jobId || job.metrics.agents.length > 0 || job.metrics.steps.length > 0) return;
  const summary = (status.error ?? 'see the deploy progress').split('\n')[0].replace(/:\s*$/, '');
  const where = status.cluster === 'local' ? 'this machine' : status.cluster;
  set({ job: before.job, actionError: `Deploy of ${jobId} to ${where} failed: ${summary}.${before.job ? ' The Monitor still shows the previous run.' : ''}` });
}

/** Deploy the edited plan to the chosen target; the Monitor shows it as for a local job. */
export async function deployPlan(): Promise<void> {
  const client = studioClient();
  const state = useStudio.getState();
  if (!client || !state.model) return;
  const { plan, diagnostics } = currentPlanState(state.model, useEditor.getState().plan, state.cluster, state.agents);
  if (!plan || diagnostics.some((d) => d.severity === 'error')) return;
  const data = dataRefOf(state.data);
  if ('why' in data) return void state.set({ actionError: data.why });
  // A model opened from a file is named by where the studio stored it; its data travels with the job.
  const run = { ...plan, model: state.model.source?.modelFile ?? plan.model };
  const loss = state.data.loss || undefined;
  const { target: name, noGpu } = useDeploy.getState();
  const target: DeployTarget = name === 'local' ? { kind: 'local' } : { kind: 'cluster', cluster: name };
  const where = name === 'local' ? ' → this machine' : ` → ${name}`;
  const previous = state.job;
  const jobId = await launchJob(plan, agentsNeeded(plan), `deploy to ${name === 'local' ? 'this machine' : name}`, () => client.deployJob({ plan: run, target, epochs: state.epochs, data: data.ref, ...(loss ? { loss } : {}), ...(noGpu ? { noGpu } : {}) }), where);
  if (!jobId) {
    // Refused before a job existed: the previous run stays on show; the status line says why.
    const { job, set } = useStudio.getState();
    if (job && !job.id) set({ job: previous });
    return;
  }
  shownBefore = { jobId, job: previous };
  follow(jobId, name, 'preparing');
}

/**
 * The job on show may be a deploy this studio runs (the page was reloaded): its host rows come back,
 * with any host-key question still waiting, and polling resumes if hosts are still being prepared. A
 * job that is not a deploy of this studio session shows none.
 */
export async function recoverDeployProgress(jobId: string): Promise<void> {
  const client = studioClient();
  if (!client || useDeploy.getState().status) return;
  let status: DeployStatus;
  try {
    status = await client.deployStatus(jobId);
  } catch {
    return; // a local job, or a deploy of an earlier session
  }
  // Still nothing shown, and still this job on show (another may have been opened meanwhile).
  if (useDeploy.getState().status || useStudio.getState().job?.id !== jobId) return;
  clearTimeout(polling);
  useDeploy.setState({ status });
  if (inProgress(status)) polling = setTimeout(() => void poll(jobId), POLL_MS);
}

export async function answerDeployTrust(promptId: string, trust: boolean): Promise<void> {
  const client = studioClient();
  const status = useDeploy.getState().status;
  if (!client || !status) return;
  // The question leaves the dialog at once; the next poll shows what the answer led to.
  useDeploy.setState({ status: { ...status, trust: status.trust.filter((t) => t.id !== promptId) } });
  try {
    await client.answerDeployHostKey({ jobId: status.jobId, promptId, trust });
  } catch (error) {
    useDeploy.setState({ error: errorText(error) });
  }
}

export function dismissDeploy(): void {
  clearTimeout(polling);
  useDeploy.setState({ status: undefined, error: undefined });
}

/** Deployed jobs from the run folders, their state asked of their hosts (a few seconds for far hosts). */
/** Numbers each listing: an answer that comes after a newer request's is stale and dropped. */
let listings = 0;

export async function refreshDeployedJobs(): Promise<void> {
  const client = studioClient();
  if (!client) return;
  const mine = ++listings;
  useDeploy.setState({ loadingJobs: true });
  try {
    const jobs = await client.listDeployedJobs();
    if (mine === listings) useDeploy.setState({ jobs, loadingJobs: false });
  } catch (error) {
    if (mine === listings) useDeploy.setState({ error: errorText(error), loadingJobs: false });
  }
}

/**
 * Stop the job on show. A deployed job's stop resolves once its processes are gone (the coordinator
 * first saves a checkpoint), which is later than its `stopped` event: the list of deployed jobs is
 * read again then, or it would go on saying "running".
 */
export async function stopShownJob(): Promise<void> {
  const id = useStudio.getState().job?.id;
  await stopTraining();
  if (id !== undefined && useDeploy.getState().status?.jobId === id) await refreshDeployedJobs();
}

/** Follow a deployed job again and back-fill its whole history into the Monitor. */
export async function openDeployedJob(job: DeployedJobSummary): Promise<void> {
  const client = studioClient();
  if (!client) return;
  try {
    useDeploy.setState({ error: undefined });
    const { jobId } = await client.attachDeployedJob(job.jobId);
    follow(jobId, job.cluster, 'attaching');
    const summary = (await client.listJobs()).find((j) => j.id === jobId);
    await showJobWithHistory(summary ?? { id: jobId, model: job.model, agents: 0, schedule: undefined }, `deployed on ${job.cluster}`);
  } catch (error) {
    useDeploy.setState({ error: `Could not open ${job.jobId}: ${errorText(error)}` });
  }
}
