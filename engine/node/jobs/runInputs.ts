import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { jobInputs, type JobInputs } from '../deploy/jobInputs.js';
import { loadModel } from '../modelRef.js';
import { readRunRecord } from './runRecord.js';

/**
 * The model and data a deployed job was started with (its job.json here), as the payload a host that
 * joins it later needs in ~/.shoal/inputs/<hash>/ — the built-in models' MNIST digits travel with the
 * agent, so those jobs have none. The files are read where they were at deploy; changed since, they
 * hash differently, and resizeInputs.ts refuses to send them (the job's agents read the deploy's folder).
 */
export function runInputs(runDir: string): JobInputs | null {
  const file = join(runDir, 'job.json');
  if (!existsSync(file)) return null;
  const record = readRunRecord(runDir);
  if (!record.training) return null;
  return jobInputs(loadModel(record.model), record.training);
}
