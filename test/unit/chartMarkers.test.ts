import { describe, expect, it } from 'vitest';
import { jobMarkers, markerKind } from '../../renderer/src/charts/markers.js';

describe('chart markers', () => {
  it('names each generation by the reason the coordinator gave', () => {
    // The reasons as agents/coordinator words them (resizes.ts, recovery.ts, trainingLoop.ts).
    expect(markerKind({ step: 10, label: 'generation 2: resize: +1 agent' })).toBe('resize');
    expect(markerKind({ step: 10, label: 'generation 3: lost rank 1 (127.0.0.1)' })).toBe('lost');
    expect(markerKind({ step: 10, label: 'generation 4: resumed from a checkpoint' })).toBe('restart');
    // The Runs view labels a generation by its reason alone.
    expect(markerKind({ step: 10, label: 'lost rank 0 (h1): 3 agents' })).toBe('lost');
    expect(markerKind({ step: 10, label: 'anything', kind: 'eval' })).toBe('eval');
  });

  it("adds one marker per evaluation to a job's generations", () => {
    const markers = jobMarkers({ markers: [{ step: 40, label: 'generation 2: resize: +1 agent' }], evalSteps: [50, 100] });
    expect(markers.map((m) => [m.step, markerKind(m)])).toEqual([
      [40, 'resize'],
      [50, 'eval'],
      [100, 'eval'],
    ]);
  });
});
