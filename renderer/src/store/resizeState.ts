import type { JobView } from './studioStore';
import { scheduleTraits } from '../../../engine/plan/scheduleTraits';

/** Why the running job cannot be resized now, or undefined when it can. */
export function resizeBlocked(job: JobView | undefined, waiting: boolean): string | undefined {
  if (!job?.id) return 'No job is running.';
  if (job.schedule && !scheduleTraits(job.schedule).stepBarrier) return 'An asynchronous pipeline cannot be resized: it has no step boundary to re-map at.';
  if (job.metrics.state !== 'running') return job.metrics.state === 'starting' ? 'The job is starting; resize it once it runs.' : 'The job is not running.';
  if (!job.metrics.membership) return 'Waiting for the job to report its agents.';
  if (waiting) return 'A resize is on its way; it is applied at the next step boundary.';
  return undefined;
}
