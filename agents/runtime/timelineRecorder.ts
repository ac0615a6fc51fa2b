import type { TimelineEvent, TimelineKind } from '../../engine/protocol/timeline.js';

/** Milliseconds on this process's wall clock (epoch-based, sub-millisecond). */
export const clockMs = (): number => performance.timeOrigin + performance.now();

/** Peak of activations a stage held for its backward passes during one step. */
export interface StashPeak {
  peakStashed: number;
  peakStashedBytes: number;
}

/**
 * Records what one agent does during a step — forward and backward per micro-batch, sends, receives,
 * the gradient all-reduce, the optimizer update — in the timeline schema the simulator predicts, with
 * absolute times on this agent's clock (the coordinator moves them onto its own axis). Recording is
 * off unless the coordinator asked for this step's timeline; the wraps then cost one clock read.
 */
export class TimelineRecorder {
  private events: TimelineEvent[] = [];
  private enabled = false;
  private peak: StashPeak = { peakStashed: 0, peakStashedBytes: 0 };
  private who: { stage: number; rank: number; replica: number } = { stage: 0, rank: 0, replica: 0 };

  /** Start a step; `enabled` says whether its events are kept. */
  begin(who: { stage: number; rank: number; replica: number }, enabled: boolean): void {
    this.who = who;
    this.enabled = enabled;
    this.events = [];
    this.peak = { peakStashed: 0, peakStashedBytes: 0 };
  }

  get recording(): boolean {
    return this.enabled;
  }

  add(kind: TimelineKind, startMs: number, endMs: number, extra: { micro?: number; bytes?: number; fused?: boolean } = {}): void {
    if (!this.enabled) return;
    this.events.push({ stage: this.who.stage, rank: this.who.rank, replica: this.who.replica, kind, startMs, endMs, ...extra });
  }

  /** Run `f` and record it as one event. */
  time<T>(kind: TimelineKind, f: () => T, extra: { micro?: number; bytes?: number; fused?: boolean } = {}): T {
    const start = clockMs();
    const out = f();
    this.add(kind, start, clockMs(), extra);
    return out;
  }

  async timeAsync<T>(kind: TimelineKind, f: () => Promise<T>, extra: { micro?: number; bytes?: number } = {}): Promise<T> {
    const start = clockMs();
    const out = await f();
    this.add(kind, start, clockMs(), extra);
    return out;
  }

  /** Note the stash of activations kept for backward passes (tensor sizes in float32 elements). */
  stashed(sizes: Iterable<{ size: number }>): void {
    let count = 0;
    let bytes = 0;
    for (const t of sizes) {
      count += 1;
      bytes += t.size * 4;
    }
    if (count > this.peak.peakStashed) this.peak.peakStashed = count;
    if (bytes > this.peak.peakStashedBytes) this.peak.peakStashedBytes = bytes;
  }

  /** The step's events (empty when not recording) and its stash peak; resets the recorder. */
  take(): { events: TimelineEvent[]; memory: StashPeak } {
    const out = { events: this.events, memory: this.peak };
    this.events = [];
    this.enabled = false;
    return out;
  }
}

/** The agent's recorder: one agent per process, so one timeline. */
export const timeline = new TimelineRecorder();
