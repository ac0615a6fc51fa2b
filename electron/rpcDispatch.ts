import { z } from 'zod';
import { AddHostsRequestSchema, ClusterNameSchema, ClusterSettingsRequestSchema, EditHostRequestSchema, ImportHostsRequestSchema, RemoveHostRequestSchema, RenameClusterRequestSchema, TestIdSchema, TrustAnswerSchema } from '../engine/protocol/clusters.js';
import { DeployedJobIdSchema, DeployRequestSchema, DeployTrustAnswerSchema } from '../engine/protocol/deploy.js';
import { ImportModelRequestSchema } from '../engine/protocol/modelImport.js';
import { InspectDatasetRequestSchema, UploadDataFileRequestSchema } from '../engine/protocol/datasetInspect.js';
import { DeleteRunOptionsSchema, RunIdSchema, RunMetaUpdateSchema } from '../engine/protocol/runs.js';
import { ResizeRequestSchema, RpcCallSchema, TrainRequestSchema } from '../engine/protocol/studioApi.js';
import type { RpcCall, RpcResult, StudioApi } from '../engine/protocol/studioApi.js';

/**
 * The one place where an untrusted request from a renderer (WebSocket or IPC) becomes a StudioApi call.
 * Every payload is parsed with zod, parameters included; failures come back as readable messages and
 * never as stack traces.
 */
const jobId = z.string().min(1).max(200);
const paramSchemas = {
  info: z.tuple([]),
  listModels: z.tuple([]),
  getModel: z.tuple([z.string().min(1).max(200)]),
  importModelFile: z.tuple([ImportModelRequestSchema]),
  startTraining: z.tuple([TrainRequestSchema]),
  stopJob: z.tuple([jobId]),
  resizeJob: z.tuple([jobId, ResizeRequestSchema]),
  listJobs: z.tuple([]),
  jobEvents: z.tuple([jobId, z.number().int().min(0)]),
  listRuns: z.tuple([]),
  getRun: z.tuple([RunIdSchema]),
  exportRunWeights: z.tuple([RunIdSchema]),
  exportedWeightFiles: z.tuple([RunIdSchema]),
  updateRun: z.tuple([RunIdSchema, RunMetaUpdateSchema]),
  deleteRun: z.union([z.tuple([RunIdSchema]), z.tuple([RunIdSchema, DeleteRunOptionsSchema])]),
  listClusters: z.tuple([]),
  addClusterHosts: z.tuple([AddHostsRequestSchema]),
  importClusterHosts: z.tuple([ImportHostsRequestSchema]),
  renameCluster: z.tuple([RenameClusterRequestSchema]),
  removeCluster: z.tuple([ClusterNameSchema]),
  setClusterSettings: z.tuple([ClusterSettingsRequestSchema]),
  editClusterHost: z.tuple([EditHostRequestSchema]),
  removeClusterHost: z.tuple([RemoveHostRequestSchema]),
  startClusterTest: z.tuple([ClusterNameSchema]),
  clusterTestStatus: z.tuple([TestIdSchema]),
  answerHostKey: z.tuple([TrustAnswerSchema]),
  deployJob: z.tuple([DeployRequestSchema]),
  deployStatus: z.tuple([DeployedJobIdSchema]),
  answerDeployHostKey: z.tuple([DeployTrustAnswerSchema]),
  listDeployedJobs: z.tuple([]),
  attachDeployedJob: z.tuple([DeployedJobIdSchema]),
  inspectDataset: z.tuple([InspectDatasetRequestSchema]),
  uploadDataFile: z.tuple([UploadDataFileRequestSchema]),
} as const;

function describeIssues(error: z.ZodError): string {
  return error.issues.map((issue) => `${issue.path.join('.') || '(request)'}: ${issue.message}`).join('; ');
}

/** A message safe to show a user: the error's message only, bounded in length. */
export function errorMessage(error: unknown): string {
  const text = error instanceof Error ? error.message : typeof error === 'string' ? error : 'Unknown error.';
  return text.length > 2000 ? `${text.slice(0, 2000)}…` : text;
}

async function invoke(api: StudioApi, call: RpcCall): Promise<unknown> {
  const bad = (error: z.ZodError) => new Error(`Bad parameters for ${call.method}: ${describeIssues(error)}`);
  switch (call.method) {
    case 'info':
    case 'listModels':
    case 'listJobs':
    case 'listRuns':
    case 'listClusters':
    case 'listDeployedJobs': {
      const parsed = paramSchemas[call.method].safeParse(call.params);
      if (!parsed.success) throw bad(parsed.error);
      return api[call.method]();
    }
    case 'getModel': {
      const parsed = paramSchemas.getModel.safeParse(call.params);
      if (!parsed.success) throw bad(parsed.error);
      return api.getModel(parsed.data[0]);
    }
    case 'importModelFile': {
      const parsed = paramSchemas.importModelFile.safeParse(call.params);
      if (!parsed.success) throw bad(parsed.error);
      return api.importModelFile(parsed.data[0]);
    }
    case 'startTraining': {
      const parsed = paramSchemas.startTraining.safeParse(call.params);
      if (!parsed.success) throw bad(parsed.error);
      return api.startTraining(parsed.data[0]);
    }
    case 'stopJob': {
      const parsed = paramSchemas.stopJob.safeParse(call.params);
      if (!parsed.success) throw bad(parsed.error);
      await api.stopJob(parsed.data[0]);
      return null;
    }
    case 'resizeJob': {
      const parsed = paramSchemas.resizeJob.safeParse(call.params);
      if (!parsed.success) throw bad(parsed.error);
      await api.resizeJob(parsed.data[0], parsed.data[1]);
      return null;
    }
    case 'getRun':
    case 'exportRunWeights':
    case 'exportedWeightFiles': {
      const parsed = paramSchemas[call.method].safeParse(call.params);
      if (!parsed.success) throw bad(parsed.error);
      return api[call.method](parsed.data[0]);
    }
    case 'updateRun': {
      const parsed = paramSchemas.updateRun.safeParse(call.params);
      if (!parsed.success) throw bad(parsed.error);
      return api.updateRun(parsed.data[0], parsed.data[1]);
    }
    case 'deleteRun': {
      const parsed = paramSchemas.deleteRun.safeParse(call.params);
      if (!parsed.success) throw bad(parsed.error);
      return api.deleteRun(parsed.data[0], parsed.data[1]);
    }
    case 'addClusterHosts': {
      const parsed = paramSchemas.addClusterHosts.safeParse(call.params);
      if (!parsed.success) throw bad(parsed.error);
      return api.addClusterHosts(parsed.data[0]);
    }
    case 'importClusterHosts': {
      const parsed = paramSchemas.importClusterHosts.safeParse(call.params);
      if (!parsed.success) throw bad(parsed.error);
      return api.importClusterHosts(parsed.data[0]);
    }
    case 'renameCluster': {
      const parsed = paramSchemas.renameCluster.safeParse(call.params);
      if (!parsed.success) throw bad(parsed.error);
      return api.renameCluster(parsed.data[0]);
    }
    case 'removeCluster': {
      const parsed = paramSchemas.removeCluster.safeParse(call.params);
      if (!parsed.success) throw bad(parsed.error);
      return api.removeCluster(parsed.data[0]);
    }
    case 'setClusterSettings': {
      const parsed = paramSchemas.setClusterSettings.safeParse(call.params);
      if (!parsed.success) throw bad(parsed.error);
      return api.setClusterSettings(parsed.data[0]);
    }
    case 'editClusterHost': {
      const parsed = paramSchemas.editClusterHost.safeParse(call.params);
      if (!parsed.success) throw bad(parsed.error);
      return api.editClusterHost(parsed.data[0]);
    }
    case 'removeClusterHost': {
      const parsed = paramSchemas.removeClusterHost.safeParse(call.params);
      if (!parsed.success) throw bad(parsed.error);
      return api.removeClusterHost(parsed.data[0]);
    }
    case 'startClusterTest':
    case 'clusterTestStatus': {
      const parsed = paramSchemas[call.method].safeParse(call.params);
      if (!parsed.success) throw bad(parsed.error);
      return api[call.method](parsed.data[0]);
    }
    case 'answerHostKey': {
      const parsed = paramSchemas.answerHostKey.safeParse(call.params);
      if (!parsed.success) throw bad(parsed.error);
      await api.answerHostKey(parsed.data[0]);
      return null;
    }
    case 'deployJob': {
      const parsed = paramSchemas.deployJob.safeParse(call.params);
      if (!parsed.success) throw bad(parsed.error);
      return api.deployJob(parsed.data[0]);
    }
    case 'deployStatus':
    case 'attachDeployedJob': {
      const parsed = paramSchemas[call.method].safeParse(call.params);
      if (!parsed.success) throw bad(parsed.error);
      return api[call.method](parsed.data[0]);
    }
    case 'answerDeployHostKey': {
      const parsed = paramSchemas.answerDeployHostKey.safeParse(call.params);
      if (!parsed.success) throw bad(parsed.error);
      await api.answerDeployHostKey(parsed.data[0]);
      return null;
    }
    case 'inspectDataset': {
      const parsed = paramSchemas.inspectDataset.safeParse(call.params);
      if (!parsed.success) throw bad(parsed.error);
      return api.inspectDataset(parsed.data[0]);
    }
    case 'uploadDataFile': {
      const parsed = paramSchemas.uploadDataFile.safeParse(call.params);
      if (!parsed.success) throw bad(parsed.error);
      return api.uploadDataFile(parsed.data[0]);
    }
    case 'jobEvents': {
      const parsed = paramSchemas.jobEvents.safeParse(call.params);
      if (!parsed.success) throw bad(parsed.error);
      return api.jobEvents(parsed.data[0], parsed.data[1]);
    }
  }
}

/** Parse a raw request and run it; always resolves to an RpcResult. */
export async function dispatchCall(api: StudioApi, raw: unknown): Promise<RpcResult> {
  const parsed = RpcCallSchema.safeParse(raw);
  if (!parsed.success) {
    const id = typeof raw === 'object' && raw !== null && Number.isInteger((raw as { id?: unknown }).id) ? (raw as { id: number }).id : -1;
    return { kind: 'result', id, ok: false, error: `Malformed request: ${describeIssues(parsed.error)}` };
  }
  const call = parsed.data;
  try {
    const value = await invoke(api, call);
    return { kind: 'result', id: call.id, ok: true, value: value ?? null };
  } catch (error) {
    return { kind: 'result', id: call.id, ok: false, error: errorMessage(error) };
  }
}
