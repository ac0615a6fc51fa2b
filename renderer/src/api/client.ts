import type { ModelGraph } from '../../../engine/model/graph';
import type { ZooEntry } from '../../../engine/model/zoo';
import type { JobEvent } from '../../../engine/protocol/events';
import type { AddHostsRequest, ClusterListing, ClusterSettingsRequest, ClusterTestStatus, EditHostRequest, ImportHostsRequest, RemoveHostRequest, RenameClusterRequest, TrustAnswer } from '../../../engine/protocol/clusters';
import type { DeployedJobSummary, DeployRequest, DeployStatus, DeployTrustAnswer } from '../../../engine/protocol/deploy';
import type { ImportModelRequest } from '../../../engine/protocol/modelImport';
import type { DatasetInspection, InspectDatasetRequest, UploadDataFileRequest } from '../../../engine/protocol/datasetInspect';
import type { DeleteRunOptions, ExportedFile, RunDeletion, RunDetail, RunMetaUpdate, RunSummary, WeightsExport } from '../../../engine/protocol/runs';
import type { JobSummary, ResizeRequest, StudioApi, StudioInfo, StudioMethod, TrainRequest } from '../../../engine/protocol/studioApi';
import { takeAccessToken } from './token';
import type { Transport } from './transport';
import { connectWebSocket } from './wsTransport';

export interface StudioClient extends StudioApi {
  shell: 'electron' | 'web';
  /** Called when the connection to the studio is lost for good. */
  onDisconnect(listener: (reason: string) => void): void;
}

/** The StudioApi over a transport: typed calls, errors as exceptions with the server's message. */
export function clientOver(transport: Transport): StudioClient {
  const call = async <T>(method: StudioMethod, ...params: unknown[]): Promise<T> => {
    const result = await transport.call(method, params);
    if (!result.ok) throw new Error(result.error);
    // The value comes from our own Node side, which produced it from the StudioApi types.
    return result.value as T;
  };
  return {
    shell: transport.shell,
    info: () => call<StudioInfo>('info'),
    listModels: () => call<ZooEntry[]>('listModels'),
    getModel: (name: string) => call<ModelGraph>('getModel', name),
    importModelFile: (request: ImportModelRequest) => call<ModelGraph>('importModelFile', request),
    startTraining: (request: TrainRequest) => call<{ jobId: string }>('startTraining', request),
    stopJob: (jobId: string) => call<void>('stopJob', jobId),
    resizeJob: (jobId: string, request: ResizeRequest) => call<void>('resizeJob', jobId, request),
    listJobs: () => call<JobSummary[]>('listJobs'),
    jobEvents: (jobId: string, since: number) => call<JobEvent[]>('jobEvents', jobId, since),
    listRuns: () => call<RunSummary[]>('listRuns'),
    getRun: (runId: string) => call<RunDetail>('getRun', runId),
    exportRunWeights: (runId: string) => call<WeightsExport>('exportRunWeights', runId),
    exportedWeightFiles: (runId: string) => call<ExportedFile[]>('exportedWeightFiles', runId),
    updateRun: (runId: string, update: RunMetaUpdate) => call<RunSummary>('updateRun', runId, update),
    deleteRun: (runId: string, options?: DeleteRunOptions) => call<RunDeletion>('deleteRun', runId, ...(options ? [options] : [])),
    listClusters: () => call<ClusterListing>('listClusters'),
    addClusterHosts: (request: AddHostsRequest) => call<ClusterListing>('addClusterHosts', request),
    importClusterHosts: (request: ImportHostsRequest) => call<ClusterListing & { imported: string[]; warnings: string[]; from: string }>('importClusterHosts', request),
    renameCluster: (request: RenameClusterRequest) => call<ClusterListing>('renameCluster', request),
    removeCluster: (cluster: string) => call<ClusterListing>('removeCluster', cluster),
    setClusterSettings: (request: ClusterSettingsRequest) => call<ClusterListing>('setClusterSettings', request),
    editClusterHost: (request: EditHostRequest) => call<ClusterListing>('editClusterHost', request),
    removeClusterHost: (request: RemoveHostRequest) => call<ClusterListing>('removeClusterHost', request),
    startClusterTest: (cluster: string) => call<{ testId: string }>('startClusterTest', cluster),
    clusterTestStatus: (testId: string) => call<ClusterTestStatus>('clusterTestStatus', testId),
    answerHostKey: (answer: TrustAnswer) => call<void>('answerHostKey', answer),
    deployJob: (request: DeployRequest) => call<{ jobId: string }>('deployJob', request),
    deployStatus: (jobId: string) => call<DeployStatus>('deployStatus', jobId),
    answerDeployHostKey: (answer: DeployTrustAnswer) => call<void>('answerDeployHostKey', answer),
    listDeployedJobs: () => call<DeployedJobSummary[]>('listDeployedJobs'),
    attachDeployedJob: (jobId: string) => call<{ jobId: string }>('attachDeployedJob', jobId),
    inspectDataset: (request: InspectDatasetRequest) => call<DatasetInspection>('inspectDataset', request),
    uploadDataFile: (request: UploadDataFileRequest) => call<{ path: string; bytes: number }>('uploadDataFile', request),
    onJobEvent: (listener: (jobId: string, event: JobEvent) => void) => transport.subscribe((message) => listener(message.jobId, message.event)),
    onDisconnect: (listener) => transport.onClose?.(listener),
  };
}

/** Connect through Electron's bridge when present, else through the browser shell's WebSocket. */
export async function connectStudio(): Promise<StudioClient> {
  if (window.shoal) return clientOver(window.shoal);
  const token = takeAccessToken();
  if (!token) throw new Error('No access token in the page address. Open the full URL the studio printed (it ends in #token=…).');
  return clientOver(await connectWebSocket(token));
}
