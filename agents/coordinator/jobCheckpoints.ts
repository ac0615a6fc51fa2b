import { latestCheckpointIn } from '../../engine/wire/checkpointFolder.js';
import { loadCheckpoint, saveCheckpoint } from './checkpoints.js';
import type { Generation } from './generation.js';
import { heldStateFrom, type HeldState } from './heldState.js';
import { stateFromSnapshots, type JobState } from './jobState.js';
import { writePatiently } from './patientWrite.js';
import { now, type TrainingRun } from './trainingRun.js';

/** A last checkpoint that cannot be written is tried again this often, for this long (the user frees space). */
const FINAL_RETRY_MS = 5_000;
const FINAL_GIVE_UP_MS = 30 * 60_000;

/**
 * The job's state as the training loop takes and keeps it: snapshots of a running generation,
 * checkpoint files saved at step boundaries, and the checkpoint a job resumes or falls back to.
 */
export class JobCheckpoints {

  constructor(private readonly run: TrainingRun) {}

  /** The state of every stage, gathered by the running generation (all its agents alive). */
  async snapshot(gen: Generation): Promise<JobState> {
    return stateFromSnapshots(await gen.ask({ type: 'snapshot' }));
  }

  /** The same round, but each stage's state stays with its holder for a peer-to-peer hand-over. */
  async holdSnapshot(gen: Generation): Promise<HeldState> {
    return heldStateFrom(await gen.ask({ type: 'snapshot', keep: true }), gen.members);
  }

  /**
   * Save step `at`'s state, when the job has a checkpoint folder; returns the file, or null. A failed
   * write is reported at once (path and OS error). Mid-job it must not end the training it protects;
   * the final one (`required`: the last step, a stop that checkpoints) is the job's result, so it
   * throws. At the end of training, while the disk is full, it is held in memory and tried again
   * (./patientWrite.ts), up to FINAL_GIVE_UP_MS: nobody may be watching, and hours of training are at
   * stake. A stop's checkpoint fails at once instead: whoever stops waits for it for 30 s only
   * (engine/node/jobs/stopOutcome.ts), and is better told the cause than timed out.
   */
  async save(gen: Generation, at: number, required = at === this.run.config.steps): Promise<string | null> {
    const { config, log, modelName, say } = this.run;
    const dir = config.checkpointDir;
    if (!dir) return null;
    const state = await this.snapshot(gen);
    const write = () => saveCheckpoint(dir, state, { jobId: config.jobId, plan: gen.plan, model: modelName, step: at });
    try {
      const saved = required && at === config.steps
        ? await writePatiently(write, {
            retryMs: FINAL_RETRY_MS,
            giveUpMs: FINAL_GIVE_UP_MS,
            onWait: (err, giveUpMs) => say('error', `${err.message} The weights of step ${at} are held in memory: free space in ${dir} and they are written at the next try, every ${FINAL_RETRY_MS / 1000} s for up to ${giveUpMs / 60_000} min.`),
            onRecovered: (ms) => say('info', `The checkpoint of step ${at} was written after waiting ${(ms / 1000).toFixed(0)} s for the disk.`),
          })
        : write();
      log.emit({ type: 'checkpoint', action: 'saved', step: at, path: saved.file, bytes: saved.bytes, time: now() });
      return saved.file;
    } catch (err) {
      if (required) throw new Error(`The checkpoint of step ${at} could not be written, so this job's weights are not on disk: ${(err as Error).message}`);
      say('error', `${(err as Error).message} Training goes on; the job fails if its last checkpoint cannot be written either.`);
      return null;
    }
  }

  /**
   * A controller asked the job to stop (Ctrl-C): save step `at`'s state and end with a `stopped`
   * status naming the checkpoint. A checkpoint that cannot be written fails the job instead.
   */
  async saveAndStop(gen: Generation, at: number): Promise<void> {
    const { log, say } = this.run;
    const file = await this.save(gen, at, true);
    const message = file ? `stopped on request after step ${at}; checkpoint ${file} written` : `stopped on request after step ${at}; the job has no checkpoint folder, so nothing was saved`;
    say('info', message);
    log.emit({ type: 'status', state: 'stopped', message, time: now() });
  }

  /** The checkpoint the job was asked to resume from, if any. */
  resumePoint(): { state: JobState; step: number } | null {
    const { config, modelName } = this.run;
    if (!config.resumeFrom) return null;
    const { header, state } = loadCheckpoint(config.resumeFrom, modelName);
    return { state, step: header.step };
  }

  /**
   * The latest checkpoint, when the state in hand is lost (`why`, said with it); without one the job
   * cannot go on, and `nothingToFallBackTo` says so.
   */
  fallBack(why: string, nothingToFallBackTo: string): { state: JobState; step: number } {
    const { config, log, modelName, say } = this.run;
    const file = config.checkpointDir ? latestCheckpointIn(config.checkpointDir, (m) => say('warn', m)) : null;
    if (!file) throw new Error(nothingToFallBackTo);
    const { header, state } = loadCheckpoint(file, modelName);
    say('warn', `Falling back to ${file} (step ${header.step}): ${why}.`);
    log.emit({ type: 'checkpoint', action: 'restored', step: header.step, path: file, bytes: 0, time: now() });
    return { state, step: header.step };
  }
}
