import { existsSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { checkpointFilesIn } from '../../wire/checkpointFolder.js';
import { RUN_LOCK, assertRunFolderNotBusy } from './runLock.js';

/**
 * A run folder holds one job: a new job starts only in a new or empty folder, or in the folder of the
 * run it resumes. Anything else is refused with what is there, unless the user asked to overwrite — as
 * Hugging Face's Trainer refuses a non-empty output_dir — so an earlier run or the user's own files are
 * never replaced without a word.
 */
export interface RunFolderUse {
  /** Replace an earlier run there (its records and checkpoints are removed; other files stay). */
  overwrite?: boolean;
  /** The job continues the run this folder holds (`shoal resume`). */
  resuming?: boolean;
}

/** What a run writes in its folder: what `overwrite` removes so two runs' histories never mix. */
const RUN_FILES = ['job.json', '.job.json.tmp', 'events.jsonl', 'membership.json', 'profile.json', 'coordinator.port', 'control.json', 'deploy.json', 'hosts'];

const HOW_TO_CHOOSE = 'choose a new or empty folder (--out), or pass --overwrite to replace what is there';

/** The nearest part of `path` that exists (the path itself, or a folder above it). */
function nearestExisting(path: string): string {
  let at = path;
  while (!existsSync(at) && dirname(at) !== at) at = dirname(at);
  return at;
}

/** Entries that make a folder more than empty: a stale lock and an empty checkpoints folder do not count. */
function contentsOf(dir: string): string[] {
  return readdirSync(dir).filter((name) => {
    if (name === RUN_LOCK) return false;
    const path = join(dir, name);
    if (name === 'checkpoints' && statSync(path).isDirectory() && readdirSync(path).length === 0) return false;
    return true;
  });
}

/** The job id a run folder's job.json records, or undefined. */
function recordedJobId(dir: string): string | undefined {
  try {
    const jobId = (JSON.parse(readFileSync(join(dir, 'job.json'), 'utf8')) as { jobId?: unknown }).jobId;
    return typeof jobId === 'string' ? jobId : undefined;
  } catch {
    return undefined;
  }
}

/** "job J, at step N (saved DATE)": what an earlier run in `dir` reached, from its records' names and times. */
function earlierRun(dir: string): string | undefined {
  const jobId = recordedJobId(dir);
  if (jobId === undefined) return undefined;
  const checkpoints = join(dir, 'checkpoints');
  const newest = existsSync(checkpoints) && statSync(checkpoints).isDirectory() ? checkpointFilesIn(checkpoints).at(-1) : undefined;
  if (!newest) return `job ${jobId}, with no checkpoint`;
  const step = Number(/\d+/.exec(newest)![0]);
  const saved = statSync(join(checkpoints, newest)).mtime.toISOString();
  return `job ${jobId}, at step ${step} (checkpoint saved ${saved})`;
}

/**
 * Refuse `folder` as a new job's run folder unless it is new, empty, the resumed run's, or `overwrite`
 * is given; a folder a live job holds is refused as busy (runLock.ts). Reads only: nothing is created.
 */
export function assertRunFolderUsable(folder: string, use: RunFolderUse = {}): void {
  const dir = resolve(folder);
  const existing = nearestExisting(dir);
  if (!statSync(existing).isDirectory()) {
    throw new Error(`Run folder ${dir}: ${existing} is a file, not a folder. Give a folder for the run (--out), new or empty.`);
  }
  if (existing !== dir) return;
  assertRunFolderNotBusy(dir);
  if (use.resuming || use.overwrite) return;
  const contents = contentsOf(dir);
  if (contents.length === 0) return;
  const run = earlierRun(dir);
  if (run) {
    throw new Error(`Run folder ${dir} holds an earlier run (${run}). Continue it with \`shoal resume ${dir}\`, or ${HOW_TO_CHOOSE}.`);
  }
  const shown = contents.slice(0, 5).join(', ') + (contents.length > 5 ? ` and ${contents.length - 5} more` : '');
  throw new Error(`Run folder ${dir} is not empty: it holds ${shown}. So that none of it is written over, ${HOW_TO_CHOOSE}.`);
}

/**
 * With `overwrite`: remove what an earlier run left in `dir` (its records and checkpoint files), so
 * that the new run's history, resume and export never pick up the old one's. Other files stay.
 */
export function clearEarlierRun(dir: string): void {
  for (const name of RUN_FILES) rmSync(join(dir, name), { recursive: true, force: true });
  const checkpoints = join(dir, 'checkpoints');
  for (const file of checkpointFilesIn(checkpoints)) rmSync(join(checkpoints, file), { force: true });
}

/**
 * A job that failed or was stopped before its first step leaves no half-made run folder: what it
 * wrote (its records, an empty checkpoints folder, its lock) goes, and the folder too when this job
 * made it. Only a folder whose record is job `jobId`'s (a job refused before it took its folder
 * touches nothing), never a checkpoint (a job that wrote one has a run worth resuming), never other files.
 */
export function discardUnstartedRun(dir: string, jobId: string, folderExisted: boolean): void {
  const checkpoints = join(dir, 'checkpoints');
  if (!existsSync(join(dir, 'job.json')) || recordedJobId(dir) !== jobId || checkpointFilesIn(checkpoints).length > 0) return;
  for (const name of [...RUN_FILES, RUN_LOCK]) rmSync(join(dir, name), { recursive: true, force: true });
  if (existsSync(checkpoints) && readdirSync(checkpoints).length === 0) rmSync(checkpoints, { recursive: true, force: true });
  if (!folderExisted && readdirSync(dir).length === 0) rmSync(dir, { recursive: true, force: true });
}
