import { isDeepStrictEqual } from 'node:util';
import type { CoordinatorConfig } from '../../protocol/processConfig.js';
import type { JobInputs } from '../deploy/jobInputs.js';
import { remotePath } from '../deploy/remotePaths.js';
import { runInputs } from './runInputs.js';

/** What the job's coordinator tells every agent to open, the new ones too (its config on the head host). */
export type JobReads = Partial<Pick<CoordinatorConfig, 'model' | 'training'>>;

/**
 * The model and data that hosts added to a deployed job need: the job's files as read here now
 * (runInputs), provided they are still the ones the job trains on. The coordinator names one folder,
 * ~/.shoal/inputs/<hash>/, with the hash of the files at the deploy; files changed here since hash
 * differently, so a new host would receive another folder than the one its agent opens, and the agent's
 * failure would end the whole job. That is refused before anything starts. Hosts that already ran the
 * job hold its folder from the deploy, so adding agents there needs no upload and is not refused.
 */
export function resizeInputs(runDir: string, job: { jobId: string; reads: JobReads; remoteDir?: string; newHosts: string[] }): JobInputs | null {
  const inputs = runInputs(runDir);
  if (!inputs || inputs.files.length === 0) return inputs;
  const now = inputs.remote(job.remoteDir);
  const same = now.model.source?.modelFile === job.reads.model?.source?.modelFile && isDeepStrictEqual(now.training.data, job.reads.training?.data);
  if (same) return inputs;
  if (job.newHosts.length === 0) return null;
  const used = /\/inputs\/([^/"]+)\//.exec(JSON.stringify([job.reads.model?.source, job.reads.training?.data]))?.[1];
  throw new Error(
    `The model or data files of job ${job.jobId} changed here since it was deployed: its agents read ${used ? remotePath(job.remoteDir, 'inputs', used) : 'the files of the deploy'}, ` +
      `but ${inputs.files.map((f) => f.local).join(', ')} now make ${remotePath(job.remoteDir, 'inputs', inputs.hash)}, so ${job.newHosts.join(', ')} would get other files than the job trains on. ` +
      `Put the files back as they were when the job was deployed, add agents on the job's own hosts only, or stop the job and deploy it again with the new files (shoal stop ${job.jobId}; shoal deploy …).`,
  );
}
