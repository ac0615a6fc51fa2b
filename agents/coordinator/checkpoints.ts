import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { Plan } from '../../engine/plan/plan.js';
import { readCheckpoint, writeCheckpoint, type CheckpointHeader } from '../../engine/wire/checkpointFile.js';
import { checkpointFilesIn, checkpointName } from '../../engine/wire/checkpointFolder.js';
import type { JobState } from './jobState.js';

/** Checkpoints kept in a folder; older ones are removed once a newer one is safely on disk. */
const KEEP = 3;

/** Write a job state as a checkpoint, atomically; older ones beyond the newest KEEP are removed. Returns the file and its size. */
export function saveCheckpoint(dir: string, state: JobState, meta: { jobId: string; plan: Plan; model: string; step: number }): { file: string; bytes: number } {
  const header: CheckpointHeader = {
    format: 'shoal-checkpoint',
    version: 1,
    jobId: meta.jobId,
    createdAt: new Date().toISOString(),
    model: meta.model,
    plan: meta.plan,
    step: meta.step,
    optimizer: { kind: meta.plan.optimizer.kind, step: state.optimizerStep },
    tensors: state.tensors,
  };
  // The checkpoints folder may be made again, but never its run folder: one that vanished while the
  // job ran is reported (the write fails naming it), not silently recreated empty.
  if (!existsSync(dirname(resolve(dir)))) throw new Error(`Cannot write checkpoint ${join(dir, checkpointName(meta.step))}: the run folder ${dirname(resolve(dir))} no longer exists (was it deleted?).`);
  mkdirSync(dir, { recursive: true });
  const file = join(dir, checkpointName(meta.step));
  const bytes = writeCheckpoint(file, header, state.body);
  const old = checkpointFilesIn(dir);
  for (const f of old.slice(0, Math.max(0, old.length - KEEP))) rmSync(join(dir, f), { force: true });
  return { file, bytes };
}

/** Read and check a checkpoint file as a job state (with its header). */
export function loadCheckpoint(file: string, model: string): { header: CheckpointHeader; state: JobState } {
  const { header, body } = readCheckpoint(file);
  if (header.model !== model) throw new Error(`Checkpoint ${file} is for model "${header.model}", not "${model}".`);
  return { header, state: { tensors: header.tensors, body, optimizerStep: header.optimizer.step } };
}
