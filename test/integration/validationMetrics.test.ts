import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JobEventSchema, type EvalEvent, type FinalEvent, type JobEvent } from '../../engine/protocol/events.js';
import type { DatasetRecord } from '../../engine/protocol/runs.js';
import type { TrainingSetup } from '../../engine/protocol/trainingSetup.js';
import { saveLayersModel, tfl, twoInTwoOut, writeNpyData, TWO_IN_TWO_OUT_ARRAYS } from '../support/userModels.js';

/**
 * Evaluation that means something, from the command line: a saved tfjs classifier whose training
 * config compiles metrics trains on a CSV with a categorical label, on two data-parallel agents, and
 * the final JSON line carries the validation loss, accuracy and the model's metrics, and a confusion
 * matrix whose rows are the CSV's class names, summed over both agents: it counts every validation
 * sample once and its diagonal is the accuracy. job.json records the dataset.
 */
const root = join(__dirname, '..', '..');

function shoalTrain(args: string[], dataDir: string) {
  const run = spawnSync('npx', ['shoal', 'train', ...args, '--json'], { cwd: root, encoding: 'utf8', timeout: 300_000, env: { ...process.env, CI: 'true', SHOAL_DATA_DIR: dataDir } });
  expect(run.status, run.stderr).toBe(0);
  const events: JobEvent[] = run.stdout.trim().split('\n').map((l) => JobEventSchema.parse(JSON.parse(l)));
  return { run, events, final: events.at(-1) as FinalEvent };
}
const CLASSES = ['cat', 'dog', 'eel'];
const SAMPLES = 120;
const SPLIT = 0.25;
let dir: string;
let model: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'shoal-validation-'));
  const input = tfl.input({ shape: [3], name: 'features' });
  const out = tfl.layers.dense({ units: 3, activation: 'softmax', name: 'animal' }).apply(input) as tfl.SymbolicTensor;
  model = await saveLayersModel(tfl.model({ inputs: input, outputs: out, name: 'animals' }), join(dir, 'model'));
  // The metrics a Keras user compiles: accuracy, a cross-entropy, and one that does not fit class-index targets.
  const json = JSON.parse(readFileSync(model, 'utf8')) as Record<string, unknown>;
  json.trainingConfig = { loss: 'sparse_categorical_crossentropy', metrics: ['accuracy', 'sparse_categorical_crossentropy', 'mae'] };
  writeFileSync(model, JSON.stringify(json));
  // The class is the largest feature: learnable, with some rows near the boundary.
  let state = 7;
  const rand = () => ((state = (Math.imul(state, 1664525) + 1013904223) >>> 0) / 4294967296);
  const lines = ['a,b,c,animal'];
  for (let i = 0; i < SAMPLES; i++) {
    const v = [rand(), rand(), rand()].map((x) => Math.round(x * 1000) / 1000);
    lines.push(`${v.join(',')},${CLASSES[v.indexOf(Math.max(...v))]}`);
  }
  writeFileSync(join(dir, 'animals.csv'), lines.join('\n') + '\n');
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('validation metrics of shoal train --json', () => {
  it('reports validation loss, accuracy, the model metrics and a confusion matrix with class names; job.json records the dataset', () => {
    const dataDir = join(dir, 'data');
    const { run, events, final } = shoalTrain(
      ['--model', model, '--data', join(dir, 'animals.csv'), '--label-column', 'animal', '--validation-split', String(SPLIT), '--cluster', 'local:2', '--plan', 'pp1-dp2', '--epochs', '12', '--lr', '0.5'],
      dataDir,
    );
    expect(final.type).toBe('final');
    const validationSamples = SAMPLES * SPLIT;

    expect(final.validationLoss).toBeGreaterThan(0);
    expect(Number.isFinite(final.validationLoss)).toBe(true);
    expect(final.validationAccuracy).toBeGreaterThan(0.5);
    expect(final.metrics?.accuracy).toBeCloseTo(final.validationAccuracy!, 12);
    // One output of weight 1: its cross-entropy as a metric is the validation loss.
    expect(final.metrics?.sparse_categorical_crossentropy).toBeCloseTo(final.validationLoss, 5);
    expect(final.metrics).not.toHaveProperty('mae');
    expect(run.stderr).toMatch(/the metric "mae" does not fit/);

    const c = final.confusion!;
    expect(c.output).toBe('animal');
    expect(c.classNames).toEqual(CLASSES);
    const matrix = c.matrix!;
    expect(matrix).toHaveLength(3);
    const sum = matrix.flat().reduce((a, b) => a + b, 0);
    expect(sum).toBe(validationSamples);
    expect(c.total).toBe(validationSamples);
    expect(matrix[0][0] + matrix[1][1] + matrix[2][2]).toBe(Math.round(final.validationAccuracy! * validationSamples));
    c.perClassAccuracy.forEach((a, k) => {
      const rowTotal = matrix[k].reduce((x, y) => x + y, 0);
      expect(a).toBe(rowTotal ? matrix[k][k] / rowTotal : null);
    });

    // Every evaluation reports; the last (after the last step) carries the matrix too.
    const evals = events.filter((e): e is EvalEvent => e.type === 'eval');
    expect(evals.length).toBeGreaterThan(1);
    expect(evals.slice(0, -1).every((e) => e.confusion === undefined)).toBe(true);
    expect(evals.at(-1)!.confusion).toEqual(c);

    const [runId] = readdirSync(join(dataDir, 'runs'));
    const record = JSON.parse(readFileSync(join(dataDir, 'runs', runId, 'job.json'), 'utf8')) as { dataset: DatasetRecord; plan: { seed: number }; training: TrainingSetup };
    // The split is recorded with what makes it reproducible: the fraction (the last rows, as model.fit takes them).
    expect(record.training.data).toMatchObject({ kind: 'dataset', dataset: { format: 'csv', validationSplit: SPLIT } });
    expect(record.dataset.description).toContain(`(validation split ${SPLIT})`);
    expect(Number.isInteger(record.plan.seed)).toBe(true);
    expect(run.stderr).toContain(`validation the last ${validationSamples}`);
    expect(record.dataset.name).toBe('animals.csv');
    expect(record.dataset.trainSamples).toBe(SAMPLES - validationSamples);
    expect(record.dataset.validationSamples).toBe(validationSamples);
    expect(record.dataset.checksum).toMatch(/^[0-9a-f]{64}$/);
    expect(record.dataset.checksumOf).toMatch(/1 file/);
    expect(run.stderr).toContain(`dataset animals.csv: ${SAMPLES - validationSamples} training / ${validationSamples} validation samples, sha256 ${record.dataset.checksum.slice(0, 12)}`);
  }, 300_000);

  it('reports each output of a two-output model: its loss and its metrics under <output>_<name>', async () => {
    const modelDir = join(dir, 'two');
    const file = await saveLayersModel(twoInTwoOut(), modelDir);
    const json = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
    json.trainingConfig = { loss: { cls: { class_name: 'SparseCategoricalCrossentropy', config: { from_logits: true } }, reg: 'mse' }, metrics: { cls: ['accuracy'], reg: ['mae'] } };
    writeFileSync(file, JSON.stringify(json));
    writeNpyData(join(dir, 'two-data'), TWO_IN_TWO_OUT_ARRAYS, 64);
    const { final } = shoalTrain(['--model', file, '--data', join(dir, 'two-data'), '--validation-split', '0.25', '--cluster', 'local:2', '--plan', 'pp2-dp1', '--steps', '4', '--batch', '16'], join(dir, 'two-runs'));
    const m = final.metrics!;
    expect(Object.keys(m).sort()).toEqual(['cls_accuracy', 'cls_loss', 'reg_loss', 'reg_mae']);
    // Loss weights 1: the validation loss is the outputs' losses summed.
    expect(final.validationLoss).toBeCloseTo(m.cls_loss + m.reg_loss, 5);
    expect(m.cls_accuracy).toBeCloseTo(final.validationAccuracy!, 12);
    // Mean squared error is at least the mean absolute error squared (Jensen), and both are positive.
    expect(m.reg_mae).toBeGreaterThan(0);
    expect(m.reg_loss).toBeGreaterThanOrEqual(m.reg_mae ** 2);
    expect(final.confusion?.output).toBe('cls');
    expect(final.confusion?.classNames).toEqual(['0', '1', '2']);
    expect(final.confusion?.total).toBe(16);
  }, 300_000);
});
