import { describe, expect, it } from 'vitest';
import { zooModel } from '../../engine/model/zoo.js';
import { runDifferences } from '../../engine/plan/planDiff.js';
import { presetPlan } from '../../engine/plan/presets.js';
import type { RunDetail, RunSummary } from '../../engine/protocol/runs.js';

const model = zooModel('mlp');

/** A finished run of the mlp on `preset`, with `summary` fields overriding the defaults. */
function run(id: string, preset: string, summary: Partial<RunSummary> = {}): RunDetail {
  return {
    summary: { id, createdAt: '2026-12-01T10:00:00.000Z', model: 'mlp', agents: 2, steps: 100, planLabel: preset, state: 'finished', stepsDone: 100, checkpoints: 1, hasHistory: true, tags: [], hosts: ['local'], durationMs: 12_000, finalLoss: 0.25, ...summary },
    plan: presetPlan(model, preset),
    curves: { step: [], epoch: [], loss: [], samplesPerSec: [], stepMs: [], elapsedMs: [] },
    evals: [],
    membership: [],
  };
}

describe('runDifferences', () => {
  it('is empty for equal runs, however many', () => {
    const a = run('a', 'pp2-dp2');
    expect(runDifferences([a, structuredClone(a), structuredClone(a)])).toEqual([]);
    expect(runDifferences([a])).toEqual([]);
    expect(runDifferences([])).toEqual([]);
  });

  it('names the plan field that differs, with one value per run in the runs\' order', () => {
    const diff = runDifferences([run('a', 'pp2-dp1'), run('b', 'pp2-dp2'), run('c', 'pp2-dp2-m8')]);
    expect(diff).toContainEqual({ path: 'plan.stages[0].dataParallel', values: ['1', '2', '2'] });
    expect(diff.find((d) => d.path === 'plan.microBatches')?.values[2]).toBe('8');
    // Fields all three agree on are not listed; the model graph is not part of a plan.
    expect(diff.some((d) => d.path === 'model' || d.path === 'agents')).toBe(false);
  });

  it('lists summary fields that differ: name, state, results, tags; a field one run lacks reads —', () => {
    const diff = runDifferences([
      run('a', 'pp1-dp1', { name: 'baseline', finalLoss: 0.123456789, tags: ['x'] }),
      run('b', 'pp1-dp1', { state: 'failed', finalLoss: 0.5 }),
      run('c', 'pp1-dp1', { finalLoss: 0.5, durationMs: 90_000 }),
    ]);
    expect(diff).toEqual([
      { path: 'name', values: ['baseline', '—', '—'] },
      { path: 'status', values: ['finished', 'failed', 'finished'] },
      { path: 'duration (s)', values: ['12', '12', '90'] },
      { path: 'final loss', values: ['0.123457', '0.5', '0.5'] },
      { path: 'tags', values: ['x', '—', '—'] },
    ]);
  });

  it('shows a stage only one run has and moved layers as values', () => {
    const diff = runDifferences([run('a', 'pp1-dp1'), run('b', 'pp2-dp1')]);
    expect(diff.find((d) => d.path === 'plan.stages[0].layers')?.values[0]).toBe('input, dense_1, dense_2, logits');
    expect(diff.find((d) => d.path.startsWith('plan.stages[1].'))?.values[0]).toBe('—');
  });
});
