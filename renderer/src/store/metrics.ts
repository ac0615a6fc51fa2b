import type { FinalEvent, JobEvent, JobState } from '../../../engine/protocol/events';

/** The latest health of one stage of an asynchronous (PipeMare) pipeline. */
export type PipelineStageLine = Extract<JobEvent, { type: 'pipeline' }>;

/** What the monitor shows of one job, folded from its event stream. Arrays are replaced, never mutated. */
export interface LogLine {
  level: 'info' | 'warn' | 'error';
  host: string;
  rank: number | null;
  message: string;
  time: number;
}

export interface AgentLine {
  rank: number;
  stage: number;
  replica: number;
  host: string;
  backend: string;
}

export interface JobMetrics {
  state: JobState;
  statusMessage?: string;
  steps: number[];
  loss: number[];
  samplesPerSec: number[];
  evalSteps: number[];
  /** Test accuracy in percent. */
  accuracy: number[];
  epoch: number;
  elapsedMs: number;
  agents: AgentLine[];
  logs: LogLine[];
  /** Per stage, the newest `pipeline` event (asynchronous schedule only). */
  pipeline: PipelineStageLine[];
  final?: FinalEvent;
}

const MAX_LOGS = 500;

export function emptyMetrics(): JobMetrics {
  return { state: 'starting', steps: [], loss: [], samplesPerSec: [], evalSteps: [], accuracy: [], epoch: 0, elapsedMs: 0, agents: [], logs: [], pipeline: [] };
}

export function isActive(state: JobState): boolean {
  return state === 'starting' || state === 'running';
}

/** Fold a batch of events into new metrics (one copy per batch, not per event). */
export function applyEvents(previous: JobMetrics, events: JobEvent[]): JobMetrics {
  if (events.length === 0) return previous;
  const next: JobMetrics = {
    ...previous,
    steps: [...previous.steps],
    loss: [...previous.loss],
    samplesPerSec: [...previous.samplesPerSec],
    evalSteps: [...previous.evalSteps],
    accuracy: [...previous.accuracy],
    agents: [...previous.agents],
    logs: [...previous.logs],
  };
  for (const event of events) {
    switch (event.type) {
      case 'status':
        next.state = event.state;
        next.statusMessage = event.message;
        break;
      case 'agent':
        next.agents = [...next.agents.filter((a) => a.rank !== event.rank), event].sort((a, b) => a.rank - b.rank);
        break;
      case 'step':
        // uPlot needs ascending x: a repeated or older step (a back-fill overlap) is skipped.
        if (next.steps.length > 0 && event.step <= next.steps[next.steps.length - 1]) break;
        next.steps.push(event.step);
        next.loss.push(event.loss);
        next.samplesPerSec.push(event.samplesPerSec);
        next.epoch = event.epoch;
        next.elapsedMs = event.elapsedMs;
        break;
      case 'eval':
        if (next.evalSteps.length > 0 && event.step <= next.evalSteps[next.evalSteps.length - 1]) break;
        next.evalSteps.push(event.step);
        next.accuracy.push(event.testAccuracy * 100);
        break;
      case 'log':
        next.logs.push({ level: event.level, host: event.host, rank: event.rank, message: event.message, time: event.time });
        break;
      case 'pipeline':
        next.pipeline = [...next.pipeline.filter((p) => p.stage !== event.stage), event].sort((a, b) => a.stage - b.stage);
        break;
      case 'final':
        next.final = event;
        break;
    }
  }
  if (next.logs.length > MAX_LOGS) next.logs = next.logs.slice(-MAX_LOGS);
  return next;
}
