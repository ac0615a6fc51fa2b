import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { stepsPerEpoch } from '../data/dataOrder.js';
import { agentsNeeded, type Plan } from '../plan/plan.js';
import type { DeployedJobSummary } from '../protocol/deploy.js';
import type { IndexedJobEvent } from '../protocol/events.js';
import type { StudioApi } from '../protocol/studioApi.js';
import { summarizeDeployedJob } from './commands/jobs.js';
import type { Launcher } from './deploy/launcher.js';
import { LocalLauncher } from './deploy/localLauncher.js';
import { mapBounded } from './deploy/ssh/mapBounded.js';
import { SshLauncher } from './deploy/sshLauncher.js';
import { DeployedStudioJob } from './deployedStudioJob.js';
import { HostKeyQuestions } from './hosts/hostKeyQuestions.js';
import { clusterSettingsOf, clustersFile, findCluster } from './hosts/clusterStore.js';
import { newJobId } from './jobs/jobConfigs.js';
import { preflightJob } from './jobs/jobPreflight.js';
import { studioTraining } from './studioTraining.js';
import { listDeployRecords, type DeployRecord } from './jobs/deployRecord.js';
import { launcherFor } from './jobs/launcherFor.js';
import { runsRoot } from './jobs/runStore.js';
import { readRunRecord } from './jobs/runRecord.js';

export type DeployApi = Pick<StudioApi, 'deployJob' | 'deployStatus' | 'answerDeployHostKey' | 'listDeployedJobs' | 'attachDeployedJob'>;

/** The plan the job was deployed with (job.json beside deploy.json), for the Monitor's summary. */
function recordedPlan(runDir: string): Plan | undefined {
  if (!existsSync(join(runDir, 'job.json'))) return undefined;
  try {
    return readRunRecord(runDir).plan;
  } catch {
    return undefined;
  }
}

/**
 * The deploy part of the StudioApi: one-click deploy to a stored SSH cluster or this machine (detached,
 * as `shoal deploy`), its per-host progress and host-key questions, the deployed jobs found in the run
 * folders with their state asked of their hosts, and re-attaching to one. Jobs are DeployedStudioJobs,
 * which the studio's api lists, streams and stops like its local jobs. Requests come parsed (rpcDispatch).
 */
export function deployService(emit: (jobId: string, event: IndexedJobEvent) => void): DeployApi & { jobs: Map<string, DeployedStudioJob>; close(): void } {
  const jobs = new Map<string, DeployedStudioJob>();
  let prompts = 0;
  const nextPromptId = () => `trust-${++prompts}`;
  const job = (id: string): DeployedStudioJob => {
    const found = jobs.get(id);
    if (!found) throw new Error(`No deployed job ${id} in this studio session: open it from Jobs on clusters first.`);
    return found;
  };

  return {
    jobs,
    async deployJob(r) {
      // The model and data are checked here, before any host is touched (as Train checks them).
      const { model, training } = studioTraining(r.plan, r.data, r.loss);
      const agents = agentsNeeded(r.plan);
      // The checks every job passes, here so that a job that cannot run is refused at once.
      const steps = preflightJob({ plan: r.plan, model, agents, training, steps: r.steps, epochs: r.steps === undefined ? (r.epochs ?? 5) : undefined });
      const questions = new HostKeyQuestions(nextPromptId);
      let launcher: Launcher;
      let cluster = 'local';
      let hosts: DeployRecord['hosts'] = [];
      if (r.target.kind === 'local') launcher = new LocalLauncher();
      else {
        const stored = findCluster(r.target.cluster);
        if (!stored) throw new Error(`No cluster "${r.target.cluster}" in ${clustersFile()}. Add it in Clusters first.`);
        if (stored.hosts.length === 0) throw new Error(`Cluster ${stored.name} has no hosts. Add some in Clusters first.`);
        cluster = stored.name;
        hosts = stored.hosts;
        launcher = new SshLauncher(stored.hosts, { trustRequest: questions.ask, noGpu: r.noGpu === true, allowCpuFallback: r.allowCpuFallback === true, settings: clusterSettingsOf(stored) });
      }
      const id = newJobId();
      const created = new DeployedStudioJob(id, { model: model.name, agents, schedule: r.plan.schedule, cluster, startedAt: Date.now() }, launcher, questions, (event, index) => emit(id, { index, event }));
      jobs.set(id, created);
      void created.deploy({
        model,
        plan: r.plan,
        training,
        steps,
        evalEverySteps: r.evalEverySteps ?? stepsPerEpoch(training.trainSamples, r.plan.globalBatch),
        cluster,
        hosts,
      });
      return { jobId: id };
    },
    async deployStatus(jobId) {
      return job(jobId).status();
    },
    async answerDeployHostKey(a) {
      if (!job(a.jobId).questions.answer(a.promptId, a.trust)) throw new Error(`No host key question ${a.promptId} is waiting in job ${a.jobId}: it was answered already or timed out.`);
    },
    async listDeployedJobs(): Promise<DeployedJobSummary[]> {
      return mapBounded(listDeployRecords(), 4, async ({ record }) => {
        const attached = jobs.get(record.jobId)?.attached ?? false;
        // Host keys were trusted when the job was deployed; an unknown one now is refused, and says so.
        const launcher = launcherFor(record);
        try {
          return { ...(await summarizeDeployedJob(record, launcher)), attached };
        } catch (err) {
          return { jobId: record.jobId, cluster: record.cluster, model: record.model, createdAt: record.createdAt, state: 'unknown' as const, detail: (err as Error).message, attached };
        } finally {
          launcher.close();
        }
      });
    },
    async attachDeployedJob(id) {
      const existing = jobs.get(id);
      if (existing?.attached) return { jobId: id };
      const found = listDeployRecords().find((r) => r.record.jobId === id);
      if (!found) throw new Error(`No deployed job ${id} in ${runsRoot()}: it was deployed from another machine or its run folder was removed.`);
      const { record, runDir } = found;
      const plan = recordedPlan(runDir);
      const questions = new HostKeyQuestions(nextPromptId);
      const launcher = launcherFor(record, { trustRequest: questions.ask });
      const facts = {
        model: record.model,
        agents: plan ? agentsNeeded(plan) : record.processes.filter((p) => p.role === 'agent').length,
        schedule: plan?.schedule ?? ('gpipe' as const),
        cluster: record.cluster,
        startedAt: Date.parse(record.createdAt) || Date.now(),
      };
      existing?.detach();
      const created = new DeployedStudioJob(id, facts, launcher, questions, (event, index) => emit(id, { index, event }));
      jobs.set(id, created);
      void created.attach(record, runDir);
      return { jobId: id };
    },
    close() {
      for (const j of jobs.values()) j.detach();
    },
  };
}
