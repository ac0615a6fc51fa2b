import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { listRuns, readRun, upgradeLegacy } from '../../engine/node/jobs/runHistory.js';
import { loadModel } from '../../engine/node/modelRef.js';
import { presetPlan } from '../../engine/plan/presets.js';

/**
 * Run folders written before the held-out data was called a validation set: their events.jsonl has
 * `testAccuracy` / `testLoss` on eval and final events. The Runs view reads them under today's names;
 * a run written today reads as written, with its metrics, confusion matrix and dataset record.
 */
const root = mkdtempSync(join(tmpdir(), 'shoal-legacy-runs-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function writeRun(id: string, events: object[], extra: object = {}): void {
  mkdirSync(join(root, id, 'checkpoints'), { recursive: true });
  const record = { jobId: id, createdAt: `2026-01-0${id.length % 9}T00:00:00.000Z`, model: 'mlp', plan: presetPlan(loadModel('mlp'), 'pp1-dp1'), agents: 1, steps: 2, ...extra };
  writeFileSync(join(root, id, 'job.json'), JSON.stringify(record));
  writeFileSync(join(root, id, 'events.jsonl'), events.map((e) => JSON.stringify(e)).join('\n') + '\n');
}

const step = (s: number) => ({ type: 'step', step: s, epoch: s / 2, loss: 1 / (s + 1), samplesPerSec: 100, stepMs: 10, elapsedMs: 10 * (s + 1) });
const finalOf = (result: object) => ({ type: 'final', final: true, ...result, steps: 2, epochs: 1, seconds: 1, samplesPerSec: 100, backends: ['wasm'] });

describe('run history across the validation rename', () => {
  it('reads an old run: testAccuracy and testLoss become validationAccuracy and validationLoss', () => {
    writeRun('old-run', [step(0), { type: 'eval', step: 1, epoch: 0.5, testAccuracy: 0.5, testLoss: 1.2 }, step(1), { type: 'eval', step: 2, epoch: 1, testAccuracy: 0.75, testLoss: 0.8 }, { type: 'status', state: 'finished', time: 1 }, finalOf({ testAccuracy: 0.75, testLoss: 0.8 })]);
    const detail = readRun('old-run', undefined, root);
    expect(detail.evals).toEqual([
      { step: 1, epoch: 0.5, validationAccuracy: 0.5, validationLoss: 1.2 },
      { step: 2, epoch: 1, validationAccuracy: 0.75, validationLoss: 0.8 },
    ]);
    expect(detail.final).toEqual({ validationAccuracy: 0.75, validationLoss: 0.8, steps: 2, seconds: 1, samplesPerSec: 100, backends: ['wasm'] });
    expect(detail.dataset).toBeUndefined();
    const summary = listRuns(new Map(), root).find((r) => r.id === 'old-run')!;
    expect(summary.state).toBe('finished');
    expect(summary.validationAccuracy).toBe(0.75);
  });

  it('reads an old regression run (no accuracy) and leaves other events and new names alone', () => {
    expect(upgradeLegacy({ type: 'eval', step: 3, epoch: 1, testLoss: 0.25 })).toEqual({ type: 'eval', step: 3, epoch: 1, validationLoss: 0.25 });
    const current = { type: 'eval', step: 3, epoch: 1, validationLoss: 0.25, metrics: { mae: 0.4 } };
    expect(upgradeLegacy(current)).toBe(current);
    const step0 = step(0);
    expect(upgradeLegacy(step0)).toBe(step0);
    expect(upgradeLegacy('not an event')).toBe('not an event');
  });

  it('reads a new run with metrics, its confusion matrix and the dataset record', () => {
    const confusion = { output: 'animal', classNames: ['cat', 'dog'], matrix: [[3, 1], [0, 4]], perClassAccuracy: [0.75, 1], total: 8 };
    const dataset = { name: 'animals.csv', description: 'csv /data/animals.csv', checksum: 'a'.repeat(64), checksumOf: 'the description and 1 file', trainSamples: 24, validationSamples: 8 };
    const result = { validationAccuracy: 0.875, validationLoss: 0.3, metrics: { accuracy: 0.875 }, confusion };
    writeRun('new-run', [step(0), step(1), { type: 'eval', step: 2, epoch: 1, ...result }, finalOf(result)], { dataset });
    const detail = readRun('new-run', undefined, root);
    expect(detail.final?.confusion).toEqual(confusion);
    expect(detail.final?.metrics).toEqual({ accuracy: 0.875 });
    expect(detail.evals.at(-1)?.confusion).toEqual(confusion);
    expect(detail.dataset).toEqual(dataset);
  });
});
