import '@tensorflow/tfjs-backend-cpu';
import * as tf from '@tensorflow/tfjs-core';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { PeerMesh } from '../../agents/comm/peerMesh.js';
import { ProcessGroup } from '../../agents/comm/processGroup.js';
import { GradientSync } from '../../agents/exec/gradientSync.js';
import { createOptimizer, disposeMemo, type Optimizer } from '../../agents/exec/optimizer.js';
import { zeroModelStateBytes } from '../../engine/cost/zeroMemory.js';
import { optimizerFromKeras, optimizerFromOptions, optimizerSlots } from '../../engine/plan/optimizerOptions.js';
import { OptimizerSchema, type OptimizerConfig } from '../../engine/plan/plan.js';
import { initialValues, reference, SHAPES, train, variables, type Member } from '../support/gradientCase.js';

/**
 * Shoal's optimizers against TensorFlow.js's own tf.train optimizers (the same backend, the same
 * gradients: they must agree to float rounding, in fact bit for bit), AdamW against its formula in
 * float64, and the state's round trips (checkpoint export/import, memo/rewind, ZeRO's sharding).
 */

beforeAll(async () => {
  await tf.setBackend('cpu');
});

const STEPS = 5;
const PARAM_SHAPES = [[3, 4], [5], [2, 2, 2], [1]];
const sizeOf = (shape: number[]) => shape.reduce((a, b) => a * b, 1);

/** Deterministic values in [-scale, scale) (mulberry32). */
function random(length: number, seed: number, scale = 1): Float32Array {
  let a = seed >>> 0;
  return Float32Array.from({ length }, () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((((t ^ (t >>> 14)) >>> 0) / 4294967296) * 2 - 1) * scale;
  });
}

const initial = () => PARAM_SHAPES.map((s, i) => random(sizeOf(s), 11 + i));
/** Gradient of parameter i at step s; with `dead`, one element of the first parameter is always 0 (a dead unit). */
function gradient(s: number, i: number, dead = true): Float32Array {
  const g = random(sizeOf(PARAM_SHAPES[i]), 1000 * (s + 1) + i, 0.5);
  if (dead && i === 0) g[0] = 0;
  return g;
}
const gradTensors = (s: number, dead = true) => PARAM_SHAPES.map((shape, i) => tf.tensor(gradient(s, i, dead), shape));
const values = (params: tf.Variable[]) => params.map((p) => (p.dataSync() as Float32Array).slice());

/** Largest |a − b| over largest |b|, per parameter, the worst of them. */
function relativeError(actual: ArrayLike<number>[], expected: ArrayLike<number>[]): number {
  let worst = 0;
  expected.forEach((b, i) => {
    let diff = 0;
    let scale = 0;
    for (let e = 0; e < b.length; e++) {
      diff = Math.max(diff, Math.abs(actual[i][e] - b[e]));
      scale = Math.max(scale, Math.abs(b[e]));
    }
    worst = Math.max(worst, Number.isNaN(diff) ? Infinity : diff / Math.max(scale, 1e-30));
  });
  return worst;
}

const bitwiseEqual = (a: Float32Array[], b: Float32Array[]) => a.every((x, i) => Buffer.from(x.buffer).equals(Buffer.from(b[i].buffer)));

/** Shoal's optimizer over `steps` steps from the initial values. */
function runShoal(config: OptimizerConfig, steps = STEPS, dead = true): Float32Array[] {
  const params = variables(initial(), PARAM_SHAPES);
  const optimizer = createOptimizer(config);
  for (let s = 0; s < steps; s++) optimizer.apply(params, gradTensors(s, dead));
  const out = values(params);
  optimizer.dispose();
  params.forEach((p) => p.dispose());
  return out;
}

/** A tf.train optimizer over `steps` steps from the same initial values and gradients. */
function runTfjs(make: () => tf.Optimizer, steps = STEPS, dead = true): Float32Array[] {
  const params = initial().map((v, i) => tf.variable(tf.tensor(v, PARAM_SHAPES[i])));
  const optimizer = make();
  for (let s = 0; s < steps; s++) {
    const grads = gradTensors(s, dead);
    optimizer.applyGradients(params.map((p, i) => ({ name: p.name, tensor: grads[i] })));
    grads.forEach((g) => g.dispose());
  }
  const out = values(params);
  optimizer.dispose();
  params.forEach((p) => p.dispose());
  return out;
}

const parse = (config: Record<string, unknown>) => OptimizerSchema.parse(config);

describe('Shoal optimizers equal tf.train on the same backend', () => {
  /** Name, Shoal's config, the tf.train optimizer, and whether the gradients may have a dead unit. */
  const cases: Array<[string, OptimizerConfig, () => tf.Optimizer, boolean?]> = [
    ['sgd', parse({ kind: 'sgd', learningRate: 0.1 }), () => tf.train.sgd(0.1)],
    ['sgd, momentum 0.9 (tf.train.momentum)', parse({ kind: 'sgd', learningRate: 0.1, momentum: 0.9 }), () => tf.train.momentum(0.1, 0.9)],
    ['sgd, momentum 0.9, Nesterov', parse({ kind: 'sgd', learningRate: 0.1, momentum: 0.9, nesterov: true }), () => tf.train.momentum(0.1, 0.9, true)],
    ['sgd, momentum 0.5, Nesterov', parse({ kind: 'sgd', learningRate: 0.03, momentum: 0.5, nesterov: true }), () => tf.train.momentum(0.03, 0.5, true)],
    ['adam, defaults', parse({ kind: 'adam', learningRate: 0.01 }), () => tf.train.adam(0.01)],
    ['adam, β 0.8/0.99, ε 1e-3', parse({ kind: 'adam', learningRate: 0.05, beta1: 0.8, beta2: 0.99, epsilon: 1e-3 }), () => tf.train.adam(0.05, 0.8, 0.99, 1e-3)],
    ['rmsprop, defaults', parse({ kind: 'rmsprop', learningRate: 0.01 }), () => tf.train.rmsprop(0.01)],
    ['rmsprop, decay 0.8, momentum 0.5, ε 1e-4', parse({ kind: 'rmsprop', learningRate: 0.01, decay: 0.8, momentum: 0.5, epsilon: 1e-4 }), () => tf.train.rmsprop(0.01, 0.8, 0.5, 1e-4)],
    // Centered: tfjs subtracts ε where TensorFlow adds it (see RmsProp); with ε far below s − ḡ² both
    // vanish, but for a dead unit (tfjs: √(0 − ε) = NaN), so all gradients here are nonzero.
    ['rmsprop, centered, ε 1e-30', parse({ kind: 'rmsprop', learningRate: 0.01, epsilon: 1e-30, centered: true }), () => tf.train.rmsprop(0.01, 0.9, 0, 1e-30, true), false],
    ['rmsprop, centered, momentum 0.9, ε 1e-30', parse({ kind: 'rmsprop', learningRate: 0.01, decay: 0.7, momentum: 0.9, epsilon: 1e-30, centered: true }), () => tf.train.rmsprop(0.01, 0.7, 0.9, 1e-30, true), false],
    ['adagrad, defaults', parse({ kind: 'adagrad', learningRate: 0.05 }), () => tf.train.adagrad(0.05)],
    ['adagrad, initial accumulator 0.5', parse({ kind: 'adagrad', learningRate: 0.05, initialAccumulatorValue: 0.5 }), () => tf.train.adagrad(0.05, 0.5)],
  ];

  it.each(cases)('%s', (_name, config, make, dead = true) => {
    const shoal = runShoal(config, STEPS, dead);
    const tfjs = runTfjs(make, STEPS, dead);
    const error = relativeError(shoal, tfjs);
    console.log(`${_name}: max relative error ${error}, bit for bit ${bitwiseEqual(shoal, tfjs)}`);
    expect(error).toBeLessThanOrEqual(1e-6);
    // They moved: the comparison is not of two untouched copies.
    expect(relativeError(shoal, initial())).toBeGreaterThan(1e-3);
  });

  it('old plans: sgd without nesterov, adam with the old fields, parse as before', () => {
    expect(parse({ kind: 'sgd', learningRate: 0.1 })).toEqual({ kind: 'sgd', learningRate: 0.1, momentum: 0 });
    expect(parse({ kind: 'sgd', learningRate: 0.05, momentum: 0.9 })).toEqual({ kind: 'sgd', learningRate: 0.05, momentum: 0.9 });
    expect(parse({ kind: 'adam', learningRate: 0.001 })).toEqual({ kind: 'adam', learningRate: 0.001, beta1: 0.9, beta2: 0.999, epsilon: 1e-7 });
    expect(parse({ kind: 'adamw', learningRate: 0.001 })).toEqual({ kind: 'adamw', learningRate: 0.001, beta1: 0.9, beta2: 0.999, epsilon: 1e-7, weightDecay: 0.004 });
    expect(parse({ kind: 'rmsprop', learningRate: 0.001 })).toEqual({ kind: 'rmsprop', learningRate: 0.001, decay: 0.9, momentum: 0, epsilon: 1e-7, centered: false });
    expect(parse({ kind: 'adagrad', learningRate: 0.001 })).toEqual({ kind: 'adagrad', learningRate: 0.001, initialAccumulatorValue: 0.1, epsilon: 1e-7 });
    expect(() => parse({ kind: 'lamb', learningRate: 0.001 })).toThrow();
  });
});

/**
 * Adam(W) in float64 from the same float32 inputs: θ ← θ − ηλθ, then θ ← θ − η·m̂/(√v̂ + ε). `constants`
 * 'float32' takes the hyperparameters as the float32 scalars tfjs (and Shoal) compute with: β, 1 − β,
 * η, ε, ηλ rounded to float32, and 1 − βᵗ from β's running float32 power (tfjs's accBeta variables).
 */
function adamwFloat64(config: { learningRate: number; beta1: number; beta2: number; epsilon: number; weightDecay: number }, constants: 'float32' | 'exact' = 'float32'): Float64Array[] {
  const r = constants === 'float32' ? Math.fround : (x: number) => x;
  const beta1 = r(config.beta1);
  const beta2 = r(config.beta2);
  const [c1, c2] = [r(1 - config.beta1), r(1 - config.beta2)];
  const [lr, epsilon, decay] = [r(config.learningRate), r(config.epsilon), r(config.learningRate * config.weightDecay)];
  let [power1, power2] = [1, 1];
  const theta = initial().map((v) => Float64Array.from(v));
  const m = theta.map((t) => new Float64Array(t.length));
  const v = theta.map((t) => new Float64Array(t.length));
  for (let s = 0; s < STEPS; s++) {
    [power1, power2] = [r(power1 * beta1), r(power2 * beta2)];
    const [correction1, correction2] = [r(1 - power1), r(1 - power2)];
    theta.forEach((th, i) => {
      const g = gradient(s, i);
      for (let e = 0; e < th.length; e++) {
        th[e] -= decay * th[e];
        m[i][e] = beta1 * m[i][e] + c1 * g[e];
        v[i][e] = beta2 * v[i][e] + c2 * g[e] * g[e];
        th[e] -= (lr * (m[i][e] / correction1)) / (Math.sqrt(v[i][e] / correction2) + epsilon);
      }
    });
  }
  return theta;
}

/** Centered RMSprop (TensorFlow's and Keras's ε placement) in float64. */
function centeredRmspropFloat64(lr: number, rho: number, momentum: number, epsilon: number): Float64Array[] {
  const theta = initial().map((v) => Float64Array.from(v));
  const ms = theta.map((t) => new Float64Array(t.length));
  const mg = theta.map((t) => new Float64Array(t.length));
  const mom = theta.map((t) => new Float64Array(t.length));
  for (let s = 0; s < STEPS; s++) {
    theta.forEach((th, i) => {
      const g = gradient(s, i);
      for (let e = 0; e < th.length; e++) {
        ms[i][e] = rho * ms[i][e] + (1 - rho) * g[e] * g[e];
        mg[i][e] = rho * mg[i][e] + (1 - rho) * g[e];
        mom[i][e] = momentum * mom[i][e] + (lr * g[e]) / Math.sqrt(ms[i][e] - mg[i][e] ** 2 + epsilon);
        th[e] -= mom[i][e];
      }
    });
  }
  return theta;
}

describe('AdamW (no tf.train.adamw: against its formula)', () => {
  it.each([
    [{ learningRate: 0.01, beta1: 0.9, beta2: 0.999, epsilon: 1e-7, weightDecay: 0.004 }],
    [{ learningRate: 0.05, beta1: 0.8, beta2: 0.99, epsilon: 1e-6, weightDecay: 0.1 }],
  ])('equals the float64 formula: %o', (c) => {
    const shoal = runShoal(parse({ kind: 'adamw', ...c }));
    const error = relativeError(shoal, adamwFloat64(c));
    // For the record: against the exact (float64) hyperparameters the difference is tfjs's rounding of
    // β and of its running βᵗ, which Shoal keeps to equal tf.train.adam bit for bit.
    console.log(`adamw ${JSON.stringify(c)}: max relative error vs float64 ${error} (exact constants: ${relativeError(shoal, adamwFloat64(c, 'exact'))})`);
    expect(error).toBeLessThanOrEqual(1e-6);
    // The decay shows: without it the result differs by much more than rounding.
    expect(relativeError(shoal, adamwFloat64({ ...c, weightDecay: 0 }))).toBeGreaterThan(1e-5);
  });

  it('with no weight decay is Adam bit for bit, and Adam equals the same formula in float64', () => {
    const adam = runShoal(parse({ kind: 'adam', learningRate: 0.01 }));
    expect(bitwiseEqual(runShoal(parse({ kind: 'adamw', learningRate: 0.01, weightDecay: 0 })), adam)).toBe(true);
    expect(relativeError(adam, adamwFloat64({ learningRate: 0.01, beta1: 0.9, beta2: 0.999, epsilon: 1e-7, weightDecay: 0 }))).toBeLessThanOrEqual(1e-6);
  });
});

describe('centered RMSprop', () => {
  it('adds ε as TensorFlow does (float64 formula), and a zero gradient stays finite where tfjs gives NaN', () => {
    const config = parse({ kind: 'rmsprop', learningRate: 0.01, decay: 0.9, momentum: 0.5, centered: true });
    const shoal = runShoal(config);
    const error = relativeError(shoal, centeredRmspropFloat64(0.01, 0.9, 0.5, 1e-7));
    console.log(`centered rmsprop vs float64: max relative error ${error}`);
    expect(error).toBeLessThanOrEqual(1e-6);
    expect(shoal.every((p) => p.every(Number.isFinite))).toBe(true);
    // tfjs 4.22: √(s − (ḡ² + ε)) of a parameter whose gradient is 0 is √(−ε).
    const tfjs = runTfjs(() => tf.train.rmsprop(0.01, 0.9, 0.5, 1e-7, true));
    expect(Number.isNaN(tfjs[0][0])).toBe(true);
  });
});

const ROUND_TRIP_CONFIGS: Array<[string, OptimizerConfig]> = [
  ['sgd', parse({ kind: 'sgd', learningRate: 0.1 })],
  ['sgd momentum', parse({ kind: 'sgd', learningRate: 0.1, momentum: 0.9 })],
  ['sgd nesterov', parse({ kind: 'sgd', learningRate: 0.1, momentum: 0.9, nesterov: true })],
  ['adam', parse({ kind: 'adam', learningRate: 0.01 })],
  ['adamw', parse({ kind: 'adamw', learningRate: 0.01, weightDecay: 0.05 })],
  ['rmsprop', parse({ kind: 'rmsprop', learningRate: 0.01 })],
  ['rmsprop momentum centered', parse({ kind: 'rmsprop', learningRate: 0.01, momentum: 0.9, centered: true })],
  ['adagrad', parse({ kind: 'adagrad', learningRate: 0.05 })],
];

describe('optimizer state', () => {
  it.each(ROUND_TRIP_CONFIGS)('%s: exportState/importState half way gives the same result', (_name, config) => {
    const straight = runShoal(config);
    const params = variables(initial(), PARAM_SHAPES);
    const first = createOptimizer(config);
    for (let s = 0; s < 2; s++) first.apply(params, gradTensors(s));
    const state = first.exportState();
    expect(state.step).toBe(2);
    expect(Object.keys(state.slots).length).toBe(optimizerSlots(config));
    first.dispose();
    // A fresh optimizer and fresh variables, as after a restart.
    const resumedParams = variables(values(params), PARAM_SHAPES);
    params.forEach((p) => p.dispose());
    const second = createOptimizer(config);
    second.importState(structuredClone(state), resumedParams);
    for (let s = 2; s < STEPS; s++) second.apply(resumedParams, gradTensors(s));
    expect(bitwiseEqual(values(resumedParams), straight)).toBe(true);
    second.dispose();
    resumedParams.forEach((p) => p.dispose());
  });

  it.each(ROUND_TRIP_CONFIGS)('%s: memo/rewind undoes a step exactly, and leaks nothing', (_name, config) => {
    const straight = runShoal(config);
    const params = variables(initial(), PARAM_SHAPES);
    const optimizer: Optimizer = createOptimizer(config);
    for (let s = 0; s < 2; s++) optimizer.apply(params, gradTensors(s));
    const before = tf.memory().numTensors;
    const stateBefore = optimizer.exportState();
    const saved = params.map((p) => p.clone());
    const memo = optimizer.memo();
    // A step that is then discarded (other gradients), undone.
    optimizer.apply(params, gradTensors(7));
    params.forEach((p, i) => p.assign(saved[i]));
    saved.forEach((t) => t.dispose());
    optimizer.rewind(memo);
    expect(optimizer.exportState()).toEqual(stateBefore);
    expect(tf.memory().numTensors).toBe(before);
    for (let s = 2; s < STEPS; s++) optimizer.apply(params, gradTensors(s));
    expect(bitwiseEqual(values(params), straight)).toBe(true);
    // A memo that is not used is disposed by its keeper.
    const unused = optimizer.memo();
    disposeMemo(unused);
    expect(tf.memory().numTensors).toBe(before);
    optimizer.dispose();
    params.forEach((p) => p.dispose());
  });

  it('Adam after a rewind by several steps recomputes its bias corrections', () => {
    const config = parse({ kind: 'adam', learningRate: 0.01 });
    const params = variables(initial(), PARAM_SHAPES);
    const optimizer = createOptimizer(config);
    optimizer.apply(params, gradTensors(0));
    const memo = optimizer.memo();
    const saved = params.map((p) => p.clone());
    for (let s = 1; s < 4; s++) optimizer.apply(params, gradTensors(20 + s));
    params.forEach((p, i) => p.assign(saved[i]));
    saved.forEach((t) => t.dispose());
    optimizer.rewind(memo);
    for (let s = 1; s < STEPS; s++) optimizer.apply(params, gradTensors(s));
    expect(bitwiseEqual(values(params), runShoal(config))).toBe(true);
    optimizer.dispose();
    params.forEach((p) => p.dispose());
  });
});

describe('ZeRO (sharded optimizer state) for every kind', () => {
  const meshes: PeerMesh[] = [];
  afterEach(() => meshes.splice(0).forEach((m) => m.close()));

  async function connect(n: number): Promise<PeerMesh[]> {
    const mesh = Array.from({ length: n }, () => new PeerMesh('optimizers', () => {}));
    meshes.push(...mesh);
    const ports = await Promise.all(mesh.map((m) => m.listen('127.0.0.1')));
    const peers = ports.map((port, rank) => ({ rank, host: '127.0.0.1', port }));
    await Promise.all(mesh.map((m, rank) => m.connect(rank, peers.filter((p) => p.rank !== rank))));
    return mesh;
  }

  it.each(ROUND_TRIP_CONFIGS)('%s: 2 replicas under ZeRO 2 match one process, state gathered included', async (_name, config) => {
    const n = 2;
    const steps = 4;
    const expected = reference(n, steps, config);
    const mesh = await connect(n);
    const members: Member[] = Array.from({ length: n }, (_, r) => {
      const params = variables(initialValues(), SHAPES);
      const group = new ProcessGroup(r, [0, 1], mesh[r].links, { timeoutMs: 10_000 });
      return { sync: new GradientSync({ group, params, zero: 2, optimizer: config, bucketBytes: 40 }), params, indices: SHAPES.map((_, i) => i), replica: r };
    });
    await train(members, 0, steps);
    for (const m of members) expect(relativeError(values(m.params), expected.values)).toBeLessThanOrEqual(1e-5);
    const states = await Promise.all(members.map((m) => m.sync.gatherState()));
    expect(Object.keys(states[0].slots).sort()).toEqual(Object.keys(expected.state.slots).sort());
    for (const [slot, arrays] of Object.entries(expected.state.slots)) expect(relativeError(states[0].slots[slot], arrays), slot).toBeLessThanOrEqual(1e-5);
    members.forEach((m) => (m.sync.dispose(), m.params.forEach((p) => p.dispose())));
  });
});

describe('optimizerFromOptions', () => {
  it('takes tfjs and Keras spellings with Keras defaults', () => {
    expect(optimizerFromOptions('sgd', undefined, {})).toEqual({ kind: 'sgd', learningRate: 0.01, momentum: 0 });
    expect(optimizerFromOptions('SGD', 0.1, { momentum: 0.9, nesterov: true })).toEqual({ kind: 'sgd', learningRate: 0.1, momentum: 0.9, nesterov: true });
    expect(optimizerFromOptions('momentum', 0.05, {})).toEqual({ kind: 'sgd', learningRate: 0.05, momentum: 0.9 });
    expect(optimizerFromOptions('Momentum', 0.05, { momentum: 0.8, nesterov: true })).toEqual({ kind: 'sgd', learningRate: 0.05, momentum: 0.8, nesterov: true });
    expect(optimizerFromOptions('Adam', undefined, {})).toEqual({ kind: 'adam', learningRate: 0.001, beta1: 0.9, beta2: 0.999, epsilon: 1e-7 });
    expect(optimizerFromOptions('adamw', 0.002, {})).toMatchObject({ kind: 'adamw', learningRate: 0.002, weightDecay: 0.004 });
    expect(optimizerFromOptions('AdamW', undefined, { weightDecay: 0.01 })).toMatchObject({ kind: 'adamw', learningRate: 0.001, weightDecay: 0.01 });
    expect(optimizerFromOptions('RMSprop', undefined, {})).toEqual({ kind: 'rmsprop', learningRate: 0.001, decay: 0.9, momentum: 0, epsilon: 1e-7, centered: false });
    expect(optimizerFromOptions('rmsprop', 0.01, { momentum: 0.9 })).toMatchObject({ kind: 'rmsprop', momentum: 0.9 });
    expect(optimizerFromOptions('Adagrad', undefined)).toEqual({ kind: 'adagrad', learningRate: 0.001, initialAccumulatorValue: 0.1, epsilon: 1e-7 });
    // No-op values of options a kind has no use for are fine.
    expect(optimizerFromOptions('adam', 0.01, { momentum: 0, nesterov: false, weightDecay: 0 }).kind).toBe('adam');
  });

  it('refuses unknown names (listing the accepted ones), options that do not apply, and bad values', () => {
    expect(() => optimizerFromOptions('lamb', 0.01, {})).toThrow(/Unknown optimizer "lamb"; accepted: sgd, momentum, adam, adamw, rmsprop, adagrad/);
    expect(() => optimizerFromOptions('adam', 0.01, { weightDecay: 0.01 })).toThrow(/no weightDecay option.*adamw/);
    expect(() => optimizerFromOptions('adam', 0.01, { momentum: 0.9 })).toThrow(/no momentum option/);
    expect(() => optimizerFromOptions('rmsprop', 0.01, { nesterov: true })).toThrow(/no nesterov option/);
    expect(() => optimizerFromOptions('sgd', -1, {})).toThrow(/Invalid "sgd" optimizer settings: learningRate/);
    expect(() => optimizerFromOptions('sgd', 0.1, { momentum: 2 })).toThrow(/momentum/);
  });
});

describe('optimizerFromKeras', () => {
  it('reads Keras (snake_case, lr or learning_rate) and tfjs (getConfig) optimizer configs', () => {
    expect(optimizerFromKeras({ class_name: 'Adam', config: { learning_rate: 0.002, beta_1: 0.85, beta_2: 0.995, epsilon: 1e-8, amsgrad: false } })).toEqual({ kind: 'adam', learningRate: 0.002, beta1: 0.85, beta2: 0.995, epsilon: 1e-8 });
    expect(optimizerFromKeras({ class_name: 'Adam', config: { lr: 0.003, epsilon: null } })).toEqual({ kind: 'adam', learningRate: 0.003, beta1: 0.9, beta2: 0.999, epsilon: 1e-7 });
    expect(optimizerFromKeras({ class_name: 'Custom>Adam', config: { learning_rate: 0.001 } })?.kind).toBe('adam');
    expect(optimizerFromKeras({ module: 'keras.optimizers', class_name: 'AdamW', config: { learning_rate: 0.001, weight_decay: 0.01, beta_1: 0.9, beta_2: 0.999, epsilon: 1e-7 } })).toEqual({ kind: 'adamw', learningRate: 0.001, beta1: 0.9, beta2: 0.999, epsilon: 1e-7, weightDecay: 0.01 });
    expect(optimizerFromKeras({ class_name: 'Adam', config: { learning_rate: 0.001, weight_decay: 0.02 } })).toMatchObject({ kind: 'adamw', weightDecay: 0.02 });
    expect(optimizerFromKeras({ class_name: 'SGD', config: { learning_rate: 0.1, momentum: 0.9, nesterov: true } })).toEqual({ kind: 'sgd', learningRate: 0.1, momentum: 0.9, nesterov: true });
    expect(optimizerFromKeras({ class_name: 'SGD', config: { learningRate: 0.2 } })).toEqual({ kind: 'sgd', learningRate: 0.2, momentum: 0 });
    expect(optimizerFromKeras({ class_name: 'Momentum', config: { learningRate: 0.2, momentum: 0.8, useNesterov: true } })).toEqual({ kind: 'sgd', learningRate: 0.2, momentum: 0.8, nesterov: true });
    // Keras: rho is the average's decay, `decay` a learning-rate decay; tfjs: `decay` is the average's.
    expect(optimizerFromKeras({ class_name: 'RMSprop', config: { learning_rate: 0.001, rho: 0.95, momentum: 0.1, epsilon: 1e-6, centered: true, decay: 0.5 } })).toEqual({ kind: 'rmsprop', learningRate: 0.001, decay: 0.95, momentum: 0.1, epsilon: 1e-6, centered: true });
    expect(optimizerFromKeras({ class_name: 'RMSProp', config: { learningRate: 0.01, decay: 0.8, momentum: 0, epsilon: null, centered: false } })).toEqual({ kind: 'rmsprop', learningRate: 0.01, decay: 0.8, momentum: 0, epsilon: 1e-7, centered: false });
    expect(optimizerFromKeras({ class_name: 'Adagrad', config: { learning_rate: 0.01, initial_accumulator_value: 0.2, epsilon: 1e-7 } })).toEqual({ kind: 'adagrad', learningRate: 0.01, initialAccumulatorValue: 0.2, epsilon: 1e-7 });
    // A schedule: where it starts.
    expect(optimizerFromKeras({ class_name: 'Adam', config: { learning_rate: { class_name: 'ExponentialDecay', config: { initial_learning_rate: 0.01, decay_steps: 100, decay_rate: 0.9 } } } })?.learningRate).toBe(0.01);
  });

  it('is null when absent, unknown or not reproducible', () => {
    for (const x of [undefined, null, {}, 'adam', { class_name: 'Nadam', config: {} }, { class_name: 'Adamax', config: {} }, { class_name: 'Adam', config: { amsgrad: true } }, { class_name: 'SGD', config: { weight_decay: 0.01 } }, { class_name: 'Adam', config: { learning_rate: -1 } }]) {
      expect(optimizerFromKeras(x)).toBeNull();
    }
  });
});

describe('memory accounting', () => {
  it('counts each kind`s slots', () => {
    const slots = (c: Record<string, unknown>) => optimizerSlots(parse(c));
    expect(slots({ kind: 'sgd', learningRate: 1 })).toBe(0);
    expect(slots({ kind: 'sgd', learningRate: 1, momentum: 0.9, nesterov: true })).toBe(1);
    expect(slots({ kind: 'adam', learningRate: 1 })).toBe(2);
    expect(slots({ kind: 'adamw', learningRate: 1 })).toBe(2);
    expect(slots({ kind: 'rmsprop', learningRate: 1 })).toBe(1);
    expect(slots({ kind: 'rmsprop', learningRate: 1, momentum: 0.9 })).toBe(2);
    expect(slots({ kind: 'rmsprop', learningRate: 1, momentum: 0.9, centered: true })).toBe(3);
    expect(slots({ kind: 'adagrad', learningRate: 1 })).toBe(1);
    expect(zeroModelStateBytes(1000, 1, 0, 'fp32', 3).optimizer).toBe(12_000);
    expect(zeroModelStateBytes(1000, 4, 1, 'fp32', 3).optimizer).toBe(3_000);
    expect(zeroModelStateBytes(1000, 1, 0, 'fp32', 'adam')).toEqual(zeroModelStateBytes(1000, 1, 0, 'fp32', 2));
  });
});
