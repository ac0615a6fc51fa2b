import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { selectBackend } from '../../agents/backend/selectBackend.js';
import { zooModel } from '../../engine/model/zoo.js';
import { agentsNeeded, type OptimizerConfig, type Plan } from '../../engine/plan/plan.js';
import { presetPlan } from '../../engine/plan/presets.js';
import { LocalJob } from '../../engine/node/jobs/localJob.js';
import { tfjsReference } from '../support/tfjsReference.js';
import { maxRelativeError, readParams } from './paramsFile.js';

/**
 * The exactness matrix: every synchronous hybrid plan that fits in 4 local processes — data
 * parallel ∈ {1,2,4} × pipeline ∈ {1,2,4} × tensor ∈ {1,2}, ZeRO ∈ {0,1,2} where there are replicas
 * to shard over, GPipe and 1F1B where there is a pipeline — trains `mlp` to the same parameters as
 * one process of tfjs itself (test/support/tfjsReference.ts) after K steps (max relative error 1e-4 per tensor). Tensor-parallel plans use
 * Megatron's pattern with a class-sharded classifier (presets' megatronSharding).
 */
const K = 6;
const model = zooModel('mlp');
const sgd: OptimizerConfig = { kind: 'sgd', learningRate: 0.05, momentum: 0.9 };
let outDir: string;
let reference: Map<string, Float32Array>;

interface Case {
  dp: number;
  pp: number;
  tp: number;
  zero: number;
  schedule: 'gpipe' | '1f1b';
}

function cases(): Case[] {
  const out: Case[] = [];
  for (const dp of [1, 2, 4]) {
    for (const pp of [1, 2, 4]) {
      for (const tp of [1, 2]) {
        if (dp * pp * tp > 4) continue;
        for (const zero of dp > 1 ? [0, 1, 2] : [0]) {
          for (const schedule of pp > 1 ? (['gpipe', '1f1b'] as const) : (['gpipe'] as const)) out.push({ dp, pp, tp, zero, schedule });
        }
      }
    }
  }
  return out;
}

function planOf(c: Case): Plan {
  const plan = presetPlan(model, `pp${c.pp}-dp${c.dp}-tp${c.tp}`, { optimizer: sgd });
  return { ...plan, zero: c.zero, schedule: c.schedule };
}

beforeAll(async () => {
  await selectBackend();
  outDir = mkdtempSync(join(tmpdir(), 'shoal-matrix-'));
  reference = (await tfjsReference(model, presetPlan(model, 'pp1-dp1', { optimizer: sgd }), K)).params;
});
afterAll(() => rmSync(outDir, { recursive: true, force: true }));

describe('every synchronous hybrid plan on ≤ 4 processes equals one process', () => {
  it.each(cases())('dp$dp × pp$pp × tp$tp, ZeRO $zero, $schedule', async (c) => {
    const plan = planOf(c);
    const dir = join(outDir, `dp${c.dp}-pp${c.pp}-tp${c.tp}-z${c.zero}-${c.schedule}`);
    const failures: string[] = [];
    const job = new LocalJob({ model, plan, agents: agentsNeeded(plan), steps: K, runDir: dir, evalEverySteps: K, onEvent: (e) => e.type === 'status' && e.state === 'failed' && failures.push(e.message ?? '') });
    await job.start();
    await job.exited();
    expect(failures).toEqual([]);
    const got = readParams(join(dir, 'checkpoints'));
    expect([...got.keys()].sort()).toEqual([...reference.keys()].sort());
    for (const [name, values] of reference) expect(maxRelativeError(got.get(name)!, values), name).toBeLessThanOrEqual(1e-4);
  });
});

describe('a 10,000-class classifier, class-sharded, equals one process', () => {
  const wide = zooModel('mlp-wide');
  let expected: Map<string, Float32Array>;
  beforeAll(async () => {
    expected = (await tfjsReference(wide, presetPlan(wide, 'pp1-dp1', { optimizer: sgd }), K)).params;
  });

  it.each([
    { preset: 'pp1-dp1-tp2', zero: 0 },
    { preset: 'pp1-dp2-tp2', zero: 1 },
  ])('$preset, ZeRO $zero: logits never gathered', async ({ preset, zero }) => {
    const plan = { ...presetPlan(wide, preset, { optimizer: sgd }), zero };
    expect(plan.sharding.logits).toEqual({ weight: 'S(1)' });
    const dir = join(outDir, `wide-${preset}-z${zero}`);
    const programs: string[] = [];
    const job = new LocalJob({ model: wide, plan, agents: agentsNeeded(plan), steps: K, runDir: dir, evalEverySteps: K, onEvent: (e) => e.type === 'log' && e.message.includes(' runs ') && programs.push(e.message) });
    await job.start();
    await job.exited();
    // Each shard's compiled program ends with its slice of the classifier: nothing gathers the logits.
    expect(programs).toHaveLength(agentsNeeded(plan));
    for (const program of programs) expect(program).toMatch(/→ logits \(column-parallel\)$/);
    const got = readParams(join(dir, 'checkpoints'));
    expect(got.get('logits/kernel')).toHaveLength(512 * 10_000);
    for (const [name, values] of expected) expect(maxRelativeError(got.get(name)!, values), name).toBeLessThanOrEqual(1e-4);
  });
});

describe('recomputation, Adam and global-norm clipping equal one process', () => {
  async function distributed(plan: Plan, tag: string): Promise<Map<string, Float32Array>> {
    const dir = join(outDir, tag);
    const job = new LocalJob({ model, plan, agents: agentsNeeded(plan), steps: K, runDir: dir, evalEverySteps: K, onEvent: () => {} });
    await job.start();
    await job.exited();
    return readParams(join(dir, 'checkpoints'));
  }

  async function referenceFor(plan: Plan): Promise<Map<string, Float32Array>> {
    return (await tfjsReference(model, { ...presetPlan(model, 'pp1-dp1'), optimizer: plan.optimizer, gradientClipNorm: plan.gradientClipNorm }, K)).params;
  }

  it.each(['pp2-dp2', 'pp2-dp1-tp2'])('recompute on %s, 1F1B (activations rebuilt in the backward pass)', async (preset) => {
    const plan: Plan = { ...presetPlan(model, preset, { optimizer: sgd }), schedule: '1f1b', recompute: true };
    const got = await distributed(plan, `recompute-${preset}`);
    for (const [name, values] of reference) expect(maxRelativeError(got.get(name)!, values), name).toBeLessThanOrEqual(1e-4);
  });

  // The clip bound is well below the gradients' norm, so every step is clipped: the norm must be over
  // every stage and shard, each element counted once, for the result to match.
  it('Adam with clipping at norm 0.5 on pp2 × tp2 (norm over stages and shards)', async () => {
    const adam: OptimizerConfig = { kind: 'adam', learningRate: 0.001, beta1: 0.9, beta2: 0.999, epsilon: 1e-7 };
    const plan: Plan = { ...presetPlan(model, 'pp2-dp1-tp2', { optimizer: adam }), gradientClipNorm: 0.5 };
    const expected = await referenceFor(plan);
    const unclipped = await referenceFor({ ...plan, gradientClipNorm: undefined });
    const got = await distributed(plan, 'adam-clip');
    // Adam's √v normalisation amplifies float32 rounding of near-zero gradients (exactness.test.ts).
    for (const [name, values] of expected) expect(maxRelativeError(got.get(name)!, values), name).toBeLessThanOrEqual(1e-3);
    // …and clipping changed the result, so the comparison above could fail.
    expect(Math.max(...[...unclipped].map(([name, values]) => maxRelativeError(values, expected.get(name)!)))).toBeGreaterThan(1e-2);
  });
});
