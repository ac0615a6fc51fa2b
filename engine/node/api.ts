import { cpus } from 'node:os';
import { basename } from 'node:path';
import { zooEntries, zooModel } from '../model/zoo.js';
import { importModelFile } from './modelImport.js';
import { studioTraining } from './studioTraining.js';
import { inspectDataset } from './datasetInspect.js';
import { uploadDataFile } from './datasetUpload.js';
import type { IndexedJobEvent } from '../protocol/events.js';
import type { JobSummary, StudioApi, StudioInfo } from '../protocol/studioApi.js';
import { defaultLocalAgents, LocalJob } from './jobs/localJob.js';
import { runsService } from './runsService.js';
import { clustersService } from './clustersService.js';
import { deployService } from './deployService.js';
import type { StudioJob } from './jobs/studioJob.js';

const VERSION = '0.1.0';

export type StudioService = StudioApi & { close(): Promise<void> };

/**
 * The studio's Node-side services behind the one StudioApi both shells expose. Requests arrive parsed:
 * both shells dispatch through rpcDispatch, which checks them against the table in studioApi.ts.
 */
export function createStudioService(opts: { shell: 'electron' | 'web' }): StudioService {
  const jobs = new Map<string, StudioJob>();
  const listeners = new Set<(jobId: string, event: IndexedJobEvent) => void>();
  const { close: closeClusterTests, ...clusters } = clustersService();
  const emit = (jobId: string, event: IndexedJobEvent) => {
    for (const listener of listeners) listener(jobId, event);
  };
  // Deployed jobs (on clusters or detached here) are listed, streamed and stopped like local ones.
  const { close: detachDeployed, jobs: deployed, ...deploy } = deployService(emit);

  const job = (jobId: string): StudioJob => {
    const found = jobs.get(jobId) ?? deployed.get(jobId);
    if (!found) throw new Error(`No job "${jobId}" in this studio session.`);
    return found;
  };

  return {
    async info(): Promise<StudioInfo> {
      return { version: VERSION, shell: opts.shell, cores: cpus().length, defaultAgents: defaultLocalAgents() };
    },
    async listModels() {
      return zooEntries();
    },
    async getModel(name) {
      return zooModel(name);
    },
    async importModelFile(request) {
      return importModelFile(request);
    },
    async inspectDataset(request) {
      return inspectDataset(request);
    },
    async uploadDataFile(request) {
      return uploadDataFile(request);
    },
    async startTraining(request) {
      const { plan, agents, epochs, steps, data, loss } = request;
      const running = [...jobs.values()].find((j) => j.state === 'starting' || j.state === 'running');
      if (running) throw new Error(`Job ${running.id} is still running on this machine; stop it before starting another.`);
      // The model the plan names and its data, checked before any process starts.
      const { model, training, notes } = studioTraining(plan, data, loss);
      const created: LocalJob = new LocalJob({
        model,
        plan,
        training,
        notes,
        agents,
        epochs,
        steps,
        onEvent: (event, index) => emit(created.id, { index, event }),
      });
      jobs.set(created.id, created);
      created.start();
      return { jobId: created.id };
    },
    async stopJob(jobId) {
      await job(jobId).stopWithCheckpoint();
    },
    async resizeJob(jobId, request) {
      await job(jobId).resize(request);
    },
    async listJobs(): Promise<JobSummary[]> {
      return [...jobs.values(), ...deployed.values()].map((j) => j.summary());
    },
    async jobEvents(jobId, since) {
      return job(jobId).events.slice(since).map((event, i) => ({ index: since + i, event }));
    },
    ...runsService(() => new Map([...jobs.values(), ...deployed.values()].filter((j) => j.runDir).map((j) => [basename(j.runDir), j.state]))),
    ...clusters,
    ...deploy,
    onJobEvent(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    async close() {
      closeClusterTests();
      // Deployed jobs outlive the studio: stop following them, never stop them.
      detachDeployed();
      await Promise.all([...jobs.values()].map((j) => j.stop()));
    },
  };
}
