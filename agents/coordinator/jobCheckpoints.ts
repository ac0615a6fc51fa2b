import { latestCheckpointIn } from '../../engine/wire/checkpointFolder.js';
import { loadCheckpoint, saveCheckpoint } from './checkpoints.js';
import type { Generation } from './generation.js';
import { heldStateFrom, type HeldState } from './heldState.js';
import { stateFromSnapshots, type JobState } from './jobState.js';
import { now, type TrainingRun } from './trainingRun.js';

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

  /** Save step `at`'s state, when the job has a checkpoint folder. */
  async save(gen: Generation, at: number): Promise<void> {
    const { config, log, modelName, say } = this.run;
    if (!config.checkpointDir) return;
    const state = await this.snapshot(gen);
    try {
      const saved = saveCheckpoint(config.checkpointDir, state, { jobId: config.jobId, plan: gen.plan, model: modelName, step: at });
      log.emit({ type: 'checkpoint', action: 'saved', step: at, path: saved.file, bytes: saved.bytes, time: now() });
    } catch (err) {
      // A checkpoint that cannot be written (full disk) must not end the training it protects.
      say('error', (err as Error).message);
    }
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
    const file = config.checkpointDir ? latestCheckpointIn(config.checkpointDir) : null;
    if (!file) throw new Error(nothingToFallBackTo);
    const { header, state } = loadCheckpoint(file, modelName);
    say('warn', `Falling back to ${file} (step ${header.step}): ${why}.`);
    log.emit({ type: 'checkpoint', action: 'restored', step: header.step, path: file, bytes: 0, time: now() });
    return { state, step: header.step };
  }
}
