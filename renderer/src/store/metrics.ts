import type { AgentDevice, FinalEvent, JobEvent, JobState, ProfileEvent, TimelineJobEvent } from '../../../engine/protocol/events';
import { addAlert, alertFinding, resolveAlerts } from '../monitor/alerts';
import type { Alert } from '../monitor/alerts';

/** The latest health of one stage of an asynchronous (PipeMare) pipeline. */
export type PipelineStageLine = Extract<JobEvent, { type: 'pipeline' }>;

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
  pid?: number;
  /** The device it runs on and why that backend (absent in older histories). */
  device?: AgentDevice;
}

/** Who holds which rank from a step on (a `membership` event): a new generation after every resize or loss. */
export type MembershipLine = Extract<JobEvent, { type: 'membership' }>;

/** A change of generation, drawn on the charts at its step. */
export interface ChartMarker {
  step: number;
  label: string;
}

/**
 * What the monitor shows of one job, folded from its event stream. The per-step and per-evaluation
 * series (SERIES) grow in place, so that a live job costs its new points only, never a copy of
 * 100,000 steps per update: the metrics folded from these append to the same arrays, which an older
 * JobMetrics object then sees grown (a chart tells new points by the length). Every other array is
 * replaced, never mutated.
 */
export interface JobMetrics {
  state: JobState;
  statusMessage?: string;
  steps: number[];
  loss: number[];
  samplesPerSec: number[];
  evalSteps: number[];
  /** Validation accuracy in percent. */
  accuracy: number[];
  /** Per step: its epoch, step time and longest gradient-communication wait (NaN when not reported). */
  stepEpochs: number[];
  stepMs: number[];
  commWaitMs: number[];
  /** Per evaluation. */
  validationLoss: number[];
  /** The newest sampled step timelines (every agent's events on the coordinator's axis), oldest first. */
  timelines: TimelineJobEvent[];
  /** What the agents measured before the first step (calibrates the predicted timeline). */
  profile?: ProfileEvent['profile'];
  /** NaN loss, lost agents, stalled collectives; dismissed ones stay, flagged. */
  alerts: Alert[];
  epoch: number;
  elapsedMs: number;
  agents: AgentLine[];
  logs: LogLine[];
  /** The current generation of agents (re-balances of virtual nodes update it in place). */
  membership?: MembershipLine;
  /** Every resize and loss of an agent, at the step the new generation starts. */
  markers: ChartMarker[];
  /** Per stage, the newest `pipeline` event (asynchronous schedule only). */
  pipeline: PipelineStageLine[];
  final?: FinalEvent;
}

const MAX_LOGS = 500;
const MAX_TIMELINES = 50;

export function emptyMetrics(): JobMetrics {
  return {
    state: 'starting',
    steps: [],
    loss: [],
    samplesPerSec: [],
    evalSteps: [],
    accuracy: [],
    stepEpochs: [],
    stepMs: [],
    commWaitMs: [],
    validationLoss: [],
    timelines: [],
    alerts: [],
    epoch: 0,
    elapsedMs: 0,
    agents: [],
    logs: [],
    pipeline: [],
    markers: [],
  };
}

/** The series that grow in place, one value per step or per evaluation. */
const SERIES = ['steps', 'loss', 'samplesPerSec', 'stepEpochs', 'stepMs', 'commWaitMs', 'evalSteps', 'accuracy', 'validationLoss'] as const;
/** Each folded JobMetrics' series lengths: folding an older object again forks its series at those lengths. */
const lengthsAt = new WeakMap<JobMetrics, number[]>();

export function isActive(state: JobState): boolean {
  return state === 'starting' || state === 'running';
}

/**
 * Fold a batch of events into new metrics: a new object whose series are those of `previous` with the
 * new points appended in place (copied only when `previous` was folded before, see JobMetrics).
 */
export function applyEvents(previous: JobMetrics, events: JobEvent[]): JobMetrics {
  if (events.length === 0) return previous;
  const next: JobMetrics = { ...previous };
  const lengths = lengthsAt.get(previous);
  SERIES.forEach((key, s) => {
    if (lengths && next[key].length !== lengths[s]) next[key] = next[key].slice(0, lengths[s]);
  });
  // The log is copied once per batch, and only when it gets new lines (its viewer scrolls on a new array).
  let logCopied = false;
  const log = (line: LogLine) => {
    if (!logCopied) next.logs = [...next.logs];
    logCopied = true;
    next.logs.push(line);
  };
  for (const event of events) {
    next.alerts = resolveAlerts(next.alerts, event);
    const finding = alertFinding(event);
    if (finding) next.alerts = addAlert(next.alerts, finding);
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
        next.stepEpochs.push(event.epoch);
        next.stepMs.push(event.stepMs);
        next.commWaitMs.push(event.commWaitMs ?? Number.NaN);
        next.epoch = event.epoch;
        next.elapsedMs = event.elapsedMs;
        break;
      case 'eval':
        if (next.evalSteps.length > 0 && event.step <= next.evalSteps[next.evalSteps.length - 1]) break;
        next.evalSteps.push(event.step);
        next.accuracy.push(event.validationAccuracy === undefined ? NaN : event.validationAccuracy * 100);
        next.validationLoss.push(event.validationLoss);
        break;
      case 'log':
        log({ level: event.level, host: event.host, rank: event.rank, message: event.message, time: event.time });
        break;
      case 'membership':
        applyMembership(next, event, log);
        break;
      case 'pipeline':
        next.pipeline = [...next.pipeline.filter((p) => p.stage !== event.stage), event].sort((a, b) => a.stage - b.stage);
        break;
      case 'timeline':
        if (next.timelines.some((t) => t.step === event.step)) break;
        next.timelines = [...next.timelines, event].sort((a, b) => a.step - b.step).slice(-MAX_TIMELINES);
        break;
      case 'profile':
        next.profile = event.profile;
        break;
      case 'final':
        next.final = event;
        break;
    }
  }
  if (next.logs.length > MAX_LOGS) next.logs = next.logs.slice(-MAX_LOGS);
  lengthsAt.set(next, SERIES.map((key) => next[key].length));
  return next;
}

/**
 * A membership event: the agent chips follow it (keeping each agent's backend), and a new generation
 * after the first is a resize or a lost agent, so it gets a chart marker and a log line.
 */
function applyMembership(next: JobMetrics, event: MembershipLine, log: (line: LogLine) => void): void {
  const previous = next.membership;
  next.membership = event;
  const backends = new Map(next.agents.map((a) => [a.pid, a.backend]));
  next.agents = event.agents.map((a) => ({ rank: a.rank, stage: a.stage, replica: a.replica, host: a.host, pid: a.pid, backend: backends.get(a.pid) ?? '…' }));
  if (!previous || previous.generation === event.generation) return;
  const label = `generation ${event.generation}: ${event.reason}`;
  if (next.markers.some((m) => m.step === event.step && m.label === label)) return;
  next.markers = [...next.markers, { step: event.step, label }];
  log({
    level: event.reason.startsWith('lost') ? 'warn' : 'info',
    host: 'coordinator',
    rank: null,
    message: `Generation ${event.generation} from step ${event.step} (${event.reason}): ${event.agents.length} agents, virtual nodes [${replicaShares(event).map((r) => r.virtualNodes).join(', ')}].`,
    time: Date.now(),
  });
}

/** One line per data-parallel replica: its share of the virtual nodes and the agents that run it. */
export function replicaShares(event: MembershipLine): Array<{ replica: number; virtualNodes: number; hosts: string[] }> {
  const byReplica = new Map<number, { replica: number; virtualNodes: number; hosts: string[] }>();
  for (const a of [...event.agents].sort((x, y) => x.replica - y.replica || x.rank - y.rank)) {
    const line = byReplica.get(a.replica) ?? { replica: a.replica, virtualNodes: 0, hosts: [] };
    if (a.stage === 0 && a.shard === 0) line.virtualNodes = a.virtualNodes;
    line.hosts.push(a.host);
    byReplica.set(a.replica, line);
  }
  return [...byReplica.values()];
}
