import type { JobEvent } from '../../../engine/protocol/events';

/**
 * Alerts the monitor raises from a job's event stream: the loss became NaN or infinite, an agent was
 * lost, a collective stalled waiting for a rank. Each names the rank when the message does.
 */
export type AlertKind = 'nan-loss' | 'lost-agent' | 'stalled-collective';

export interface Alert {
  /** Unique within a job: what dismissing one refers to. */
  id: string;
  kind: AlertKind;
  rank: number | null;
  /** The message that raised it (the coordinator's or an agent's words). */
  message: string;
  /** How many events repeated it while it stayed open. */
  count: number;
  dismissed: boolean;
  /**
   * The job showed that what it raised is over: the rank is back in a generation (lost agent), a step
   * had a finite loss (NaN loss) or completed (stalled collective). Until then every report of it —
   * the coordinator's log line, the new generation, agents' errors, the failure at the end, arriving in
   * any order and at any delay — is the same incident, so a dismissed alert stays dismissed.
   */
  resolved: boolean;
}

export type AlertFinding = Pick<Alert, 'kind' | 'rank' | 'message'>;

const NAN_LOSS = /\bloss (?:became|is) (?:NaN|-?Infinity|inf)\b/i;
const LOST_MEMBERSHIP = /^lost rank (\d+)\b/;
const LOST_LOG = /\brank (\d+)\b.{0,80}?\b(?:stopped answering|disconnected)\b/;
const STALLED = [/\btimed out\b[^]*?\bwaiting for\b[^]*?\brank (\d+)\b/i, /\bwaiting for\b[^]*?\brank (\d+)\b[^]*?\btimed out\b/i];

function stalled(message: string): AlertFinding | null {
  for (const pattern of STALLED) {
    const match = pattern.exec(message);
    if (match) return { kind: 'stalled-collective', rank: Number(match[1]), message };
  }
  return null;
}

/** What one message says, if it is alarming (a failure's status message or a log line). */
export function findingInMessage(message: string): AlertFinding | null {
  if (NAN_LOSS.test(message)) return { kind: 'nan-loss', rank: null, message };
  const stall = stalled(message);
  if (stall) return stall;
  const lost = LOST_LOG.exec(message);
  if (lost) return { kind: 'lost-agent', rank: Number(lost[1]), message };
  return null;
}

/** The alert one event raises, or null. */
export function alertFinding(event: JobEvent): AlertFinding | null {
  switch (event.type) {
    case 'status':
      return event.message && (event.state === 'failed' || event.state === 'running') ? findingInMessage(event.message) : null;
    case 'log':
      return event.level === 'info' ? null : findingInMessage(event.message);
    case 'membership': {
      const lost = LOST_MEMBERSHIP.exec(event.reason);
      return lost ? { kind: 'lost-agent', rank: Number(lost[1]), message: `Generation ${event.generation} from step ${event.step}: ${event.reason}.` } : null;
    }
    case 'step':
      return Number.isFinite(event.loss) ? null : { kind: 'nan-loss', rank: null, message: `The loss became ${event.loss} at step ${event.step}.` };
    default:
      return null;
  }
}

/**
 * Add a finding to the alerts: the same kind about the same rank counts as a repeat while its alert is
 * shown, or while the incident it raised is not over (a lost agent is logged, then a new generation
 * forms, then agents report it — on a loaded machine seconds apart, after the user may have dismissed
 * the first). Only once the incident is over and its alert dismissed does a new finding open a new alert.
 */
export function addAlert(alerts: Alert[], finding: AlertFinding): Alert[] {
  const same = (a: Alert) => a.kind === finding.kind && a.rank === finding.rank;
  let at = alerts.findIndex((a) => same(a) && !a.dismissed);
  if (at < 0) at = alerts.findIndex((a) => same(a) && !a.resolved);
  if (at >= 0) return alerts.map((a, i) => (i === at ? { ...a, count: a.count + 1 } : a));
  return [...alerts, { ...finding, id: `${finding.kind}-${alerts.length + 1}`, count: 1, dismissed: false, resolved: false }];
}

/** Whether `event` shows that what `alert` raised is over. */
function endsIncident(alert: Alert, event: JobEvent): boolean {
  switch (alert.kind) {
    case 'lost-agent':
      return event.type === 'membership' && event.agents.some((a) => a.rank === alert.rank);
    case 'nan-loss':
      return event.type === 'step' && Number.isFinite(event.loss);
    case 'stalled-collective':
      return event.type === 'step';
  }
}

/** Mark the alerts whose incident `event` shows to be over (the same array when none is). */
export function resolveAlerts(alerts: Alert[], event: JobEvent): Alert[] {
  if (!alerts.some((a) => !a.resolved && endsIncident(a, event))) return alerts;
  return alerts.map((a) => (!a.resolved && endsIncident(a, event) ? { ...a, resolved: true } : a));
}

export function dismissAlert(alerts: Alert[], id: string): Alert[] {
  return alerts.map((a) => (a.id === id ? { ...a, dismissed: true } : a));
}

export const ALERT_TITLES: Record<AlertKind, string> = {
  'nan-loss': 'Loss is not a number',
  'lost-agent': 'Agent lost',
  'stalled-collective': 'Collective stalled',
};
