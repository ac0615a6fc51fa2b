import type { JobEvent, JobState } from '../../protocol/events.js';
import type { JobSummary, ResizeRequest } from '../../protocol/studioApi.js';

/**
 * A job as the studio holds it, wherever its processes run: one trained here whose processes end
 * with the studio (LocalJob) or one deployed to a cluster or detached here (DeployedStudioJob). The
 * studio's API lists, streams, resizes and stops every job through this surface alone.
 */
export interface StudioJob {
  readonly id: string;
  /** Everything the job has said so far, in order (the studio back-fills from it). */
  readonly events: readonly JobEvent[];
  readonly state: JobState;
  readonly startedAt: number;
  /** Its run folder on this machine ('' until known). */
  readonly runDir: string;
  /** End the job now: every process, no checkpoint (the studio closing, `shoal stop --now`). */
  stop(): Promise<void>;
  /** The user's Stop: the coordinator saves a checkpoint, then the job ends (as Ctrl-C and `shoal stop`). */
  stopWithCheckpoint(): Promise<void>;
  resize(request: ResizeRequest): Promise<void>;
  summary(): JobSummary;
}
