import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { selectBackend } from '../../agents/backend/selectBackend.js';
import { LocalJob } from '../../engine/node/jobs/localJob.js';
import { loadModel } from '../../engine/node/modelRef.js';
import { trainingSetupFrom } from '../../engine/node/trainingOptions.js';
import { executionSupport } from '../../engine/plan/executionSupport.js';
import { parsePlan, type Plan } from '../../engine/plan/plan.js';
import { presetPlan } from '../../engine/plan/presets.js';
import type { JobEvent } from '../../engine/protocol/events.js';
import { resnetBlock, saveLayersModel, twoInTwoOut, writeNpyData, TWO_IN_TWO_OUT_ARRAYS, type tfl } from '../support/userModels.js';
import { maxRelativeError, readParams } from './paramsFile.js';

/**
 * PipeMare's asynchronous schedule on users' own models, on real agent processes: a ResNet-style
 * block (batch normalization, a residual Add) and a two-input two-output model (a shared layer, a
 * skip connection across the pipeline cut, dropout). With one stage, one micro-batch and no
 * corrections the asynchronous schedule updates once per step like GPipe: the parameters must be the
 * same. Cut into two stages on two replicas with both corrections, it trains.
 */
let root: string;
const files: Record<string, { model: string; data: string }> = {};
const SGD = { kind: 'sgd' as const, learningRate: 0.05, momentum: 0.9 };
const NO_CORRECTIONS = { lrRescheduling: false, warmupUpdates: 0, discrepancyCorrection: false, decay: 0.1, inFlightSlack: 0 };

beforeAll(async () => {
  await selectBackend();
  root = mkdtempSync(join(tmpdir(), 'shoal-async-user-'));
  const make = async (name: string, model: tfl.LayersModel, arrays: Parameters<typeof writeNpyData>[1]) => {
    files[name] = { model: await saveLayersModel(model, join(root, name)), data: join(root, name, 'data') };
    writeNpyData(files[name].data, arrays, 64);
  };
  await make('resnet', resnetBlock(), { x: { shape: [8, 8, 2], kind: 'float' }, y: { shape: [], kind: { classes: 3 } } });
  await make('two', twoInTwoOut(), TWO_IN_TWO_OUT_ARRAYS);
}, 120_000);
afterAll(() => rmSync(root, { recursive: true, force: true }));

async function train(name: string, preset: string, extra: Partial<Plan>, steps: number, tag: string): Promise<{ runDir: string; events: JobEvent[] }> {
  const model = loadModel(files[name].model);
  const base = presetPlan(model, preset, { globalBatch: 16, microBatches: 1, seed: 7, optimizer: SGD });
  const plan = parsePlan({ ...base, model: model.source!.modelFile, ...extra });
  expect(executionSupport(plan, model)).toEqual([]);
  const training = trainingSetupFrom({ data: files[name].data }, model, plan.seed);
  const runDir = join(root, `${name}-${tag}`);
  const events: JobEvent[] = [];
  const agents = plan.stages.reduce((n, s) => n + s.dataParallel, 0);
  const job = new LocalJob({ model, plan, training, agents, steps, runDir, profile: false, onEvent: (e) => events.push(e) });
  await job.start();
  await job.exited();
  const failed = events.find((e) => e.type === 'status' && e.state === 'failed');
  expect(failed, JSON.stringify(failed)).toBeUndefined();
  return { runDir, events };
}

describe('the asynchronous schedule on users’ models', () => {
  it.each(['resnet', 'two'])('%s: one stage, one micro-batch, no corrections equals GPipe', async (name) => {
    const sync = readParams(join((await train(name, 'pp1-dp1', {}, 6, 'gpipe')).runDir, 'checkpoints'));
    const async = readParams(join((await train(name, 'pp1-dp1', { schedule: 'async', pipemare: NO_CORRECTIONS }, 6, 'async')).runDir, 'checkpoints'));
    expect([...async.keys()].sort()).toEqual([...sync.keys()].sort());
    for (const [weight, values] of sync) expect(maxRelativeError(async.get(weight)!, values), weight).toBeLessThanOrEqual(1e-4);
  });

  it.each(['resnet', 'two'])('%s: pp2 × dp2 with both corrections trains, the cut carried both ways', async (name) => {
    const pipemare = { lrRescheduling: true, warmupUpdates: 10, discrepancyCorrection: true, decay: 0.1, inFlightSlack: 1 };
    const { events } = await train(name, 'pp2-dp2', { schedule: 'async', microBatches: 2, pipemare }, 40, 'pp2');
    const losses = events.flatMap((e) => (e.type === 'step' ? [e.loss] : []));
    expect(losses).toHaveLength(40);
    expect(losses.every(Number.isFinite)).toBe(true);
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    expect(mean(losses.slice(-8))).toBeLessThan(mean(losses.slice(0, 8)));
    const stage0 = events.filter((e) => e.type === 'pipeline' && e.stage === 0);
    expect(stage0.at(-1)).toMatchObject({ delay: 2 });
  });
});
