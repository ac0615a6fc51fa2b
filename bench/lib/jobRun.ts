import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ModelGraph } from '../../engine/model/graph.js';
import { LocalJob, type LocalJobOptions } from '../../engine/node/jobs/localJob.js';
import type { Plan } from '../../engine/plan/plan.js';
import type { JobEvent } from '../../engine/protocol/events.js';

export interface JobRun {
  events: JobEvent[];
  /** From the first step's start to the last step's end: resizes and recoveries included, set-up before the first step not. */
  completionSeconds: number;
  /** Samples per second over the steps from `fromStep` on. */
  samplesPerSec: (fromStep: number) => number;
}

/** Run a local job to its end in a throw-away folder; `during` sees each event and may act on the job. */
export async function runJob(
  model: ModelGraph,
  plan: Plan,
  agents: number,
  steps: number,
  options: Partial<LocalJobOptions> = {},
  during: (e: JobEvent, job: LocalJob, events: JobEvent[]) => void = () => {},
): Promise<JobRun> {
  const dir = mkdtempSync(join(tmpdir(), 'shoal-bench-'));
  const events: JobEvent[] = [];
  try {
    const job: LocalJob = new LocalJob({
      model,
      plan,
      agents,
      steps,
      runDir: dir,
      evalEverySteps: steps,
      profile: false,
      timelineEverySteps: 0,
      ...options,
      onEvent: (e) => {
        events.push(e);
        during(e, job, events);
      },
    });
    await job.start();
    await job.exited();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const stepEvents = events.flatMap((e) => (e.type === 'step' ? [e] : []));
  const last = stepEvents.at(-1);
  const first = stepEvents[0];
  return {
    events,
    completionSeconds: last && first ? (last.elapsedMs - first.elapsedMs + first.stepMs) / 1000 : 0,
    samplesPerSec: (fromStep) => {
      const counted = stepEvents.filter((e) => e.step >= fromStep);
      return (counted.length * plan.globalBatch) / (counted.reduce((sum, e) => sum + e.stepMs, 0) / 1000);
    },
  };
}
