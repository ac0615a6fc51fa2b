import { z } from 'zod';
import type { ModelGraph } from '../model/graph.js';
import type { ZooEntry } from '../model/zoo.js';
import { PlanSchema } from '../plan/plan.js';
import type { JobEvent, JobState } from './events.js';
import type { AddHostsRequest, ClusterListing, ClusterSettingsRequest, ClusterTestStatus, EditHostRequest, ImportHostsRequest, RemoveHostRequest, RenameClusterRequest, TrustAnswer } from './clusters.js';
import type { DeployedJobSummary, DeployRequest, DeployStatus, DeployTrustAnswer } from './deploy.js';
import type { DatasetInspection, InspectDatasetRequest, UploadDataFileRequest } from './datasetInspect.js';
import type { ImportModelRequest } from './modelImport.js';
import type { DeleteRunOptions, ExportedFile, RunDeletion, RunDetail, RunMetaUpdate, RunSummary, WeightsExport } from './runs.js';
import { DataRefSchema } from './trainingSetup.js';

/**
 * StudioApi: the one typed surface both shells expose to the renderer. Electron exposes it through the
 * preload bridge (IPC); the browser shell through a token-authenticated WebSocket. Requests are parsed
 * with these schemas on the Node side, whatever the shell.
 */
export const TrainRequestSchema = z.object({
  plan: PlanSchema,
  /** Local agent processes to start; must be at least the plan's agent count. */
  agents: z.number().int().min(1).max(64),
  epochs: z.number().positive().max(1000).optional(),
  steps: z.number().int().positive().optional(),
  /** What to train on; absent: the bundled MNIST digits (the built-in models only). */
  data: DataRefSchema.optional(),
  /** A Keras or tfjs loss name for outputs the model file gives none; absent: the file's, else inferred. */
  loss: z.string().trim().min(1).max(100).optional(),
});
export type TrainRequest = z.infer<typeof TrainRequestSchema>;

/** Change a running job's agents: start `add` more on this machine, release the agents of ranks `remove`. */
export const ResizeRequestSchema = z
  .object({
    add: z.number().int().min(0).max(64).optional(),
    remove: z.array(z.number().int().min(0).max(4096)).max(64).optional(),
    /** A deployed job only: one new agent on each host named (aliases of the job's or a stored cluster); default: spread over the job's hosts. */
    hosts: z.array(z.string().trim().min(1).max(300)).max(64).optional(),
  })
  .refine((r) => (r.add ?? 0) > 0 || (r.remove?.length ?? 0) > 0 || (r.hosts?.length ?? 0) > 0, { message: 'A resize adds agents or removes ranks.' });
export type ResizeRequest = z.infer<typeof ResizeRequestSchema>;

export interface StudioInfo {
  version: string;
  shell: 'electron' | 'web';
  cores: number;
  /** Agents of the default "This machine" cluster: the core count, at least 2. */
  defaultAgents: number;
}

export interface JobSummary {
  id: string;
  model: string;
  state: JobState;
  startedAt: number;
  agents: number;
  events: number;
  /** The plan's schedule: an asynchronous pipeline cannot be resized. */
  schedule: 'gpipe' | '1f1b' | 'async';
}

export interface StudioApi {
  info(): Promise<StudioInfo>;
  listModels(): Promise<ZooEntry[]>;
  getModel(name: string): Promise<ModelGraph>;
  /**
   * Store a model opened in the renderer (model.json and the .bin files it names) where agents can
   * read it; returns its graph, whose `source.modelFile` is what a plan names to train it.
   */
  importModelFile(request: ImportModelRequest): Promise<ModelGraph>;
  startTraining(request: TrainRequest): Promise<{ jobId: string }>;
  stopJob(jobId: string): Promise<void>;
  /** Resize a running job at its next step boundary; a `membership` event follows. */
  resizeJob(jobId: string, request: ResizeRequest): Promise<void>;
  listJobs(): Promise<JobSummary[]>;
  /** Events of a job from index `since` on: how a re-attaching view back-fills its charts. */
  jobEvents(jobId: string, since: number): Promise<JobEvent[]>;
  /** Past and current runs from the run folders on disk, newest first. */
  listRuns(): Promise<RunSummary[]>;
  /** One run's curves, evaluations, plan and predicted vs measured step time. */
  getRun(runId: string): Promise<RunDetail>;
  /** Set a run's name, tags or notes (run.meta.json in its folder); returns its summary. */
  updateRun(runId: string, update: RunMetaUpdate): Promise<RunSummary>;
  /** Move a run's folder to Shoal's trash, or remove it `permanently`; a running job's run is refused. */
  deleteRun(runId: string, options?: DeleteRunOptions): Promise<RunDeletion>;
  /** Write the run's newest checkpoint as a tfjs LayersModel (model.json + weights) into `<run>/tfjs-model`. */
  exportRunWeights(runId: string): Promise<WeightsExport>;
  /** The files of that export, for a download in the browser shell. */
  exportedWeightFiles(runId: string): Promise<ExportedFile[]>;
  /** SSH clusters as stored in clusters.json (key paths only). */
  listClusters(): Promise<ClusterListing>;
  addClusterHosts(request: AddHostsRequest): Promise<ClusterListing>;
  /** Hosts from an ssh config (default ~/.ssh/config): Host, HostName, User, Port, IdentityFile, ProxyJump, Include. */
  importClusterHosts(request: ImportHostsRequest): Promise<ClusterListing & { imported: string[]; warnings: string[]; from: string }>;
  /** Rename a stored cluster (its measured links follow). */
  renameCluster(request: RenameClusterRequest): Promise<ClusterListing>;
  /** Remove a stored cluster and its measured links. */
  removeCluster(cluster: string): Promise<ClusterListing>;
  /** Set a cluster's remote directory, setup commands and env as a whole (left out: the default). */
  setClusterSettings(request: ClusterSettingsRequest): Promise<ClusterListing>;
  /** Change a host's address, key or jump chain. */
  editClusterHost(request: EditHostRequest): Promise<ClusterListing>;
  /** Remove a host (a cluster left without hosts goes too). */
  removeClusterHost(request: RemoveHostRequest): Promise<ClusterListing>;
  /** Start a connection test (preflight of every host); poll clusterTestStatus for progress and host-key questions. */
  startClusterTest(cluster: string): Promise<{ testId: string }>;
  clusterTestStatus(testId: string): Promise<ClusterTestStatus>;
  /** Trust or refuse an unknown host key a test is waiting on. */
  answerHostKey(answer: TrustAnswer): Promise<void>;
  /**
   * Deploy the plan detached to a stored SSH cluster or this machine; returns at once with the job id.
   * Poll deployStatus for per-host progress and host-key questions; events follow as for a local job.
   */
  deployJob(request: DeployRequest): Promise<{ jobId: string }>;
  deployStatus(jobId: string): Promise<DeployStatus>;
  /** Trust or refuse an unknown host key a deploy (or re-attach) is waiting on. */
  answerDeployHostKey(answer: DeployTrustAnswer): Promise<void>;
  /** Deployed jobs found in the run folders (deploy.json), newest first, their state asked of their hosts. */
  listDeployedJobs(): Promise<DeployedJobSummary[]>;
  /** Follow a deployed job again: its whole history, then live events, through onJobEvent and jobEvents. */
  attachDeployedJob(jobId: string): Promise<{ jobId: string }>;
  /** What a dataset is against the plan's model: counts, shapes, class balance, a few samples, diagnostics by field. */
  inspectDataset(request: InspectDatasetRequest): Promise<DatasetInspection>;
  /** Store a data file dropped in the browser shell in the studio's data folder; returns where it lies. */
  uploadDataFile(request: UploadDataFileRequest): Promise<{ path: string; bytes: number }>;
  /** Live events of every job; returns the function that unsubscribes. */
  onJobEvent(listener: (jobId: string, event: JobEvent) => void): () => void;
}

/** The request/response methods (everything but the subscription), by name. */
export type StudioMethod = Exclude<keyof StudioApi, 'onJobEvent'>;
export const STUDIO_METHODS: StudioMethod[] = ['info', 'listModels', 'getModel', 'importModelFile', 'startTraining', 'stopJob', 'resizeJob', 'listJobs', 'jobEvents', 'listRuns', 'getRun', 'exportRunWeights', 'exportedWeightFiles', 'updateRun', 'deleteRun',
  'listClusters', 'addClusterHosts', 'importClusterHosts', 'renameCluster', 'removeCluster', 'setClusterSettings', 'editClusterHost', 'removeClusterHost', 'startClusterTest', 'clusterTestStatus', 'answerHostKey',
  'deployJob', 'deployStatus', 'answerDeployHostKey', 'listDeployedJobs', 'attachDeployedJob', 'inspectDataset', 'uploadDataFile'];

/** Wire format shared by the WebSocket shell and Electron IPC. */
export const RpcCallSchema = z.object({
  kind: z.literal('call'),
  id: z.number().int(),
  method: z.enum(STUDIO_METHODS as [StudioMethod, ...StudioMethod[]]),
  params: z.array(z.unknown()).max(4),
});
export type RpcCall = z.infer<typeof RpcCallSchema>;
export type RpcResult =
  | { kind: 'result'; id: number; ok: true; value: unknown }
  | { kind: 'result'; id: number; ok: false; error: string };
export type RpcEvent = { kind: 'event'; jobId: string; event: JobEvent };
export type RpcServerMessage = RpcResult | RpcEvent;
