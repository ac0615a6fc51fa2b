import { z } from 'zod';
import { ZooEntrySchema } from '../model/zoo.js';
import { PlanSchema } from '../plan/plan.js';
import { IndexedJobEventSchema, JobStateSchema } from './events.js';
import {
  AddHostsRequestSchema,
  ClusterListingSchema,
  ClusterNameSchema,
  ClusterSettingsRequestSchema,
  ClusterTestStatusSchema,
  EditHostRequestSchema,
  ImportHostsRequestSchema,
  ImportHostsResultSchema,
  RemoveHostRequestSchema,
  RenameClusterRequestSchema,
  TestIdSchema,
  TrustAnswerSchema,
} from './clusters.js';
import { DeployedJobIdSchema, DeployedJobSummarySchema, DeployRequestSchema, DeployStatusSchema, DeployTrustAnswerSchema } from './deploy.js';
import { DatasetInspectionSchema, InspectDatasetRequestSchema, UploadDataFileRequestSchema } from './datasetInspect.js';
import { ImportModelRequestSchema } from './modelImport.js';
import { ModelGraphSchema } from './processConfig.js';
import { DeleteRunOptionsSchema, ExportedFileSchema, RunDeletionSchema, RunDetailSchema, RunIdSchema, RunMetaUpdateSchema, RunSummarySchema, WeightsExportSchema } from './runs.js';
import { DataRefSchema } from './trainingSetup.js';

/**
 * StudioApi: the one surface both shells expose to the renderer, written once as a table of methods
 * (STUDIO_API below). Electron carries it over IPC, the browser shell over a token-authenticated
 * WebSocket; both dispatch through electron/rpcDispatch.ts, which parses every call's parameters with
 * the table's schemas, so services receive checked values. The renderer's client is built from the same
 * table and checks every result against it.
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

export const StudioInfoSchema = z.object({
  version: z.string(),
  shell: z.enum(['electron', 'web']),
  cores: z.number(),
  /** Agents of the default "This machine" cluster: the core count, at least 2. */
  defaultAgents: z.number(),
});
export type StudioInfo = z.infer<typeof StudioInfoSchema>;

export const JobSummarySchema = z.object({
  id: z.string(),
  model: z.string(),
  state: JobStateSchema,
  startedAt: z.number(),
  agents: z.number(),
  events: z.number(),
  /** The plan's schedule: an asynchronous pipeline cannot be resized. */
  schedule: z.enum(['gpipe', '1f1b', 'async']),
});
export type JobSummary = z.infer<typeof JobSummarySchema>;

const JobIdSchema = z.string().min(1).max(200);
const JobStartedSchema = z.object({ jobId: z.string() });
/** What a method that only acts returns. */
const Nothing = z.void();

/** A request/response method: its parameters (a tuple) and its result. */
export interface CallSpec<P extends z.ZodTuple = z.ZodTuple, R extends z.ZodType = z.ZodType> {
  streams: false;
  params: P;
  result: R;
  /** What the method does, for a reader of the table. */
  doc: string;
}
/** A subscription: the listener hears each message (a tuple of arguments); subscribing returns the function that unsubscribes. */
export interface StreamSpec<M extends z.ZodTuple = z.ZodTuple> {
  streams: true;
  message: M;
  doc: string;
}
const call = <P extends z.ZodTuple, R extends z.ZodType>(params: P, result: R, doc: string): CallSpec<P, R> => ({ streams: false, params, result, doc });
const stream = <M extends z.ZodTuple>(message: M, doc: string): StreamSpec<M> => ({ streams: true, message, doc });

/** The studio API: every method once, with its parameter and result schemas. */
export const STUDIO_API = {
  info: call(z.tuple([]), StudioInfoSchema, 'The studio version, its shell and this machine\'s cores.'),
  listModels: call(z.tuple([]), z.array(ZooEntrySchema), 'The built-in models.'),
  getModel: call(z.tuple([z.string().min(1).max(200)]), ModelGraphSchema, 'A built-in model\'s graph.'),
  importModelFile: call(
    z.tuple([ImportModelRequestSchema]),
    ModelGraphSchema,
    'Store a model opened in the renderer (model.json and the .bin files it names) where agents can read it; returns its graph, whose `source.modelFile` is what a plan names to train it.',
  ),
  startTraining: call(z.tuple([TrainRequestSchema]), JobStartedSchema, 'Train the plan with agents on this machine.'),
  stopJob: call(z.tuple([JobIdSchema]), Nothing, 'Stop a job after a checkpoint.'),
  resizeJob: call(z.tuple([JobIdSchema, ResizeRequestSchema]), Nothing, 'Resize a running job at its next step boundary; a `membership` event follows.'),
  listJobs: call(z.tuple([]), z.array(JobSummarySchema), 'The jobs of this studio session, local and deployed.'),
  jobEvents: call(z.tuple([JobIdSchema, z.number().int().min(0)]), z.array(IndexedJobEventSchema), 'Events of a job from index `since` on: how a re-attaching view back-fills its charts.'),
  listRuns: call(z.tuple([]), z.array(RunSummarySchema), 'Past and current runs from the run folders on disk, newest first.'),
  getRun: call(z.tuple([RunIdSchema]), RunDetailSchema, 'One run\'s curves, evaluations, plan and predicted vs measured step time.'),
  updateRun: call(z.tuple([RunIdSchema, RunMetaUpdateSchema]), RunSummarySchema, 'Set a run\'s name, tags or notes (run.meta.json in its folder); returns its summary.'),
  deleteRun: call(z.tuple([RunIdSchema, DeleteRunOptionsSchema.optional()]), RunDeletionSchema, 'Move a run\'s folder to Shoal\'s trash, or remove it `permanently`; a running job\'s run is refused.'),
  exportRunWeights: call(z.tuple([RunIdSchema]), WeightsExportSchema, 'Write the run\'s newest checkpoint as a tfjs LayersModel (model.json + weights) into `<run>/tfjs-model`.'),
  exportedWeightFiles: call(z.tuple([RunIdSchema]), z.array(ExportedFileSchema), 'The files of that export, for a download in the browser shell.'),
  listClusters: call(z.tuple([]), ClusterListingSchema, 'SSH clusters as stored in clusters.json (key paths only).'),
  addClusterHosts: call(z.tuple([AddHostsRequestSchema]), ClusterListingSchema, 'Add hosts to a stored cluster (made when new).'),
  importClusterHosts: call(z.tuple([ImportHostsRequestSchema]), ImportHostsResultSchema, 'Hosts from an ssh config (default ~/.ssh/config): Host, HostName, User, Port, IdentityFile, ProxyJump, Include.'),
  renameCluster: call(z.tuple([RenameClusterRequestSchema]), ClusterListingSchema, 'Rename a stored cluster (its measured links follow).'),
  removeCluster: call(z.tuple([ClusterNameSchema]), ClusterListingSchema, 'Remove a stored cluster and its measured links.'),
  setClusterSettings: call(z.tuple([ClusterSettingsRequestSchema]), ClusterListingSchema, 'Set a cluster\'s remote directory, setup commands and env as a whole (left out: the default).'),
  editClusterHost: call(z.tuple([EditHostRequestSchema]), ClusterListingSchema, 'Change a host\'s address, key or jump chain.'),
  removeClusterHost: call(z.tuple([RemoveHostRequestSchema]), ClusterListingSchema, 'Remove a host (a cluster left without hosts goes too).'),
  startClusterTest: call(z.tuple([ClusterNameSchema]), z.object({ testId: z.string() }), 'Start a connection test (preflight of every host); poll clusterTestStatus for progress and host-key questions.'),
  clusterTestStatus: call(z.tuple([TestIdSchema]), ClusterTestStatusSchema, 'A connection test\'s progress.'),
  answerHostKey: call(z.tuple([TrustAnswerSchema]), Nothing, 'Trust or refuse an unknown host key a test is waiting on.'),
  deployJob: call(
    z.tuple([DeployRequestSchema]),
    JobStartedSchema,
    'Deploy the plan detached to a stored SSH cluster or this machine; returns at once with the job id. Poll deployStatus for per-host progress and host-key questions; events follow as for a local job.',
  ),
  deployStatus: call(z.tuple([DeployedJobIdSchema]), DeployStatusSchema, 'A deploy\'s per-host progress.'),
  answerDeployHostKey: call(z.tuple([DeployTrustAnswerSchema]), Nothing, 'Trust or refuse an unknown host key a deploy (or re-attach) is waiting on.'),
  listDeployedJobs: call(z.tuple([]), z.array(DeployedJobSummarySchema), 'Deployed jobs found in the run folders (deploy.json), newest first, their state asked of their hosts.'),
  attachDeployedJob: call(z.tuple([DeployedJobIdSchema]), JobStartedSchema, 'Follow a deployed job again: its whole history, then live events, through onJobEvent and jobEvents.'),
  inspectDataset: call(z.tuple([InspectDatasetRequestSchema]), DatasetInspectionSchema, 'What a dataset is against the plan\'s model: counts, shapes, class balance, a few samples, diagnostics by field.'),
  uploadDataFile: call(z.tuple([UploadDataFileRequestSchema]), z.object({ path: z.string(), bytes: z.number() }), 'Store a data file dropped in the browser shell in the studio\'s data folder; returns where it lies.'),
  onJobEvent: stream(z.tuple([JobIdSchema, IndexedJobEventSchema]), 'Live events of every job, each with its index in the job\'s history.'),
} as const;

type Table = typeof STUDIO_API;
/** The request/response methods, by name. */
export type StudioMethod = { [K in keyof Table]: Table[K] extends CallSpec ? K : never }[keyof Table];
/** The subscriptions, by name. */
export type StudioStream = Exclude<keyof Table, StudioMethod>;
export const STUDIO_METHODS = (Object.keys(STUDIO_API) as Array<keyof Table>).filter((name): name is StudioMethod => !STUDIO_API[name].streams);
export const STUDIO_STREAMS = (Object.keys(STUDIO_API) as Array<keyof Table>).filter((name): name is StudioStream => STUDIO_API[name].streams);

/** What a method's service returns: nothing for an action, else its result. */
type Returned<R extends z.ZodType> = z.output<R> extends void ? void : z.output<R>;
type Subscribe<M extends z.ZodTuple> = (listener: (...message: z.output<M>) => void) => () => void;

/** What the services implement: parameters as the boundary parsed them. */
export type StudioApi = { [K in StudioMethod]: (...params: z.output<Table[K]['params']>) => Promise<Returned<Table[K]['result']>> } & {
  [K in StudioStream]: Subscribe<Table[K]['message']>;
};
/** What the renderer calls: parameters as it may write them (defaults left out). */
export type StudioCalls = { [K in StudioMethod]: (...params: z.input<Table[K]['params']>) => Promise<Returned<Table[K]['result']>> } & {
  [K in StudioStream]: Subscribe<Table[K]['message']>;
};

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
/** A message of a subscription (onJobEvent): the listener's arguments. */
export type RpcEvent = { kind: 'event'; stream: StudioStream; message: unknown[] };
export type RpcServerMessage = RpcResult | RpcEvent;
