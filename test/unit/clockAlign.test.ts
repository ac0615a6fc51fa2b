import { describe, expect, it } from 'vitest';
import { alignEvents, clockOffset, measuredBubble, pipelineSpanMs, stageComputeMs } from '../../engine/protocol/clockAlign.js';
import type { TimelineEvent } from '../../engine/protocol/timeline.js';
import { simulatePipeline } from '../../engine/sim/simulatePipeline.js';

describe('clock offsets and timeline alignment', () => {
  it('takes the ping-pong sample with the smallest round trip', () => {
    // The agent runs 500 ms ahead; replies come back after asymmetric delays, the tightest is 2 ms.
    const samples = [
      { sentMs: 0, agentMs: 508, receivedMs: 10 },
      { sentMs: 100, agentMs: 601, receivedMs: 102 },
      { sentMs: 200, agentMs: 703, receivedMs: 210 },
    ];
    const { offsetMs, rttMs } = clockOffset(samples);
    expect(rttMs).toBe(2);
    expect(offsetMs).toBe(500);
    expect(() => clockOffset([])).toThrow();
  });

  it('moves two agents with different clocks onto one axis, in order', () => {
    const origin = 1_000;
    // Stage 0's clock is 300 ms ahead, stage 1's 200 ms behind; on the coordinator's axis stage 0
    // forwards micro 0 at 5..15 ms, stage 1 forwards it at 16..26 ms.
    const stage0: TimelineEvent[] = [{ stage: 0, rank: 0, kind: 'forward', micro: 0, startMs: 1_305, endMs: 1_315 }];
    const stage1: TimelineEvent[] = [{ stage: 1, rank: 1, kind: 'forward', micro: 0, startMs: 816, endMs: 826 }];
    const aligned = [...alignEvents(stage0, 300, origin), ...alignEvents(stage1, -200, origin)];
    expect(aligned.map((e) => [e.startMs, e.endMs])).toEqual([
      [5, 15],
      [16, 26],
    ]);
    expect(aligned[1].startMs).toBeGreaterThanOrEqual(aligned[0].endMs);
  });

  it('measures the bubble of a uniform pipeline as (p−1)/(m+p−1)', () => {
    for (const [p, m] of [
      [2, 4],
      [4, 8],
    ]) {
      const stages = Array.from({ length: p }, () => ({ forwardMs: 1, backwardMs: 2, sendActivationMs: 0, sendGradientMs: 0, allReduceMs: 0, optimizerMs: 0 }));
      for (const schedule of ['gpipe', '1f1b'] as const) {
        const sim = simulatePipeline(stages, m, schedule);
        expect(measuredBubble(sim.events)).toBeCloseTo((p - 1) / (m + p - 1), 9);
      }
    }
  });

  it('spans only the compute: transfers and updates before or after it do not count', () => {
    const events: TimelineEvent[] = [
      { stage: 0, kind: 'recv', micro: 0, startMs: 0, endMs: 4 },
      { stage: 0, kind: 'forward', micro: 0, startMs: 4, endMs: 6 },
      { stage: 1, kind: 'backward', micro: 0, startMs: 7, endMs: 9 },
      { stage: 1, kind: 'optimizer', startMs: 9, endMs: 20 },
    ];
    expect(pipelineSpanMs(events)).toBe(5);
    expect(pipelineSpanMs(events.filter((e) => e.kind === 'optimizer'))).toBe(0);
  });

  it('averages per-stage compute, fused turn-arounds apart', () => {
    const events: TimelineEvent[] = [
      { stage: 0, kind: 'forward', micro: 0, startMs: 0, endMs: 2 },
      { stage: 0, kind: 'forward', micro: 1, startMs: 2, endMs: 6 },
      { stage: 0, kind: 'backward', micro: 0, startMs: 10, endMs: 16 },
      { stage: 1, kind: 'forward', micro: 0, fused: true, startMs: 3, endMs: 12 },
    ];
    expect(stageComputeMs(events)).toEqual([
      { stage: 0, forwardMs: 3, backwardMs: 6, fusedMs: 0 },
      { stage: 1, forwardMs: 0, backwardMs: 0, fusedMs: 9 },
    ]);
  });
});
