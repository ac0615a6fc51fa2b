import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-backend-cpu';
import '@tensorflow/tfjs-backend-wasm';
import '@tensorflow/tfjs-core/dist/public/chained_ops/register_all_chained_ops';
import '@tensorflow/tfjs-core/dist/register_all_gradients';
// tfjs-layers' ES modules, as the agent bundle resolves them: the MultiHeadAttention module (not in the
// package index) exists only there, and its classes must share one copy of Layer with the model.
import * as tfl from '@tensorflow/tfjs-layers/dist/index.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { registerWasmGradientKernels } from '../../agents/backend/wasmKernels.js';
import { dropoutMask } from '../../agents/exec/graph/dropoutMask.js';
import { einsumMatMul, MultiHeadAttention } from '../../agents/exec/graph/multiHeadAttention.js';

/**
 * Shoal's MultiHeadAttention (tfjs-layers' implementation, fixed to take [query, value, key] inputs,
 * expose its projections' weights, save, load and drop out deterministically) against attention
 * written out with tfjs ops from the layer's own weights.
 */
type Weights = Map<string, tf.Tensor>;

beforeAll(async () => {
  await tf.setBackend('cpu');
});

function weightsOf(layer: tfl.layers.Layer): Weights {
  return new Map(layer.weights.map((w) => [w.originalName.slice(layer.name.length + 1), w.read()]));
}

/** x [b, t, d] · kernel [d, n, h] + bias [n, h] → [b, t, n, h], with plain matMul. */
function project(x: tf.Tensor, kernel: tf.Tensor, bias: tf.Tensor | undefined): tf.Tensor {
  const [b, t, d] = x.shape as number[];
  const [, n, h] = kernel.shape as number[];
  const y = tf.matMul(tf.reshape(x, [b * t, d]), tf.reshape(kernel, [d, n * h]));
  return tf.reshape(bias ? tf.add(y, tf.reshape(bias, [1, n * h])) : y, [b, t, n, h]);
}

/** Scaled dot-product attention over heads, written out: softmax(q·kᵀ/√h [+ causal mask]) · v, then the output projection. */
function attention(w: Weights, query: tf.Tensor, value: tf.Tensor, key: tf.Tensor, opts: { causal?: boolean; keep?: tf.Tensor } = {}): tf.Tensor {
  return tf.tidy(() => {
    const heads = (x: tf.Tensor) => tf.transpose(x, [0, 2, 1, 3]); // [b, t, n, h] → [b, n, t, h]
    const q = heads(project(query, w.get('query/kernel')!, w.get('query/bias')));
    const k = heads(project(key, w.get('key/kernel')!, w.get('key/bias')));
    const v = heads(project(value, w.get('value/kernel')!, w.get('value/bias')));
    const h = q.shape[3] as number;
    let scores = tf.div(tf.matMul(q, k, false, true), Math.sqrt(h)); // [b, n, t, s]
    if (opts.causal) {
      const [t, s] = scores.shape.slice(2) as number[];
      const future = tf.tensor2d(Array.from({ length: t * s }, (_, i) => (i % s > Math.floor(i / s) ? -1e9 : 0)), [t, s]);
      scores = tf.add(scores, future);
    }
    let probs = tf.softmax(scores, -1);
    if (opts.keep) probs = tf.mul(probs, opts.keep);
    const context = tf.transpose(tf.matMul(probs, v), [0, 2, 1, 3]); // [b, t, n, hv]
    const [b, t, n, hv] = context.shape as number[];
    const out = w.get('attention_output/kernel')!;
    const dOut = out.shape[2] as number;
    const y = tf.matMul(tf.reshape(context, [b * t, n * hv]), tf.reshape(out, [n * hv, dOut]));
    const bias = w.get('attention_output/bias');
    return tf.reshape(bias ? tf.add(y, bias) : y, [b, t, dOut]);
  });
}

function maxDiff(a: tf.Tensor, b: tf.Tensor): number {
  expect(a.shape).toEqual(b.shape);
  return tf.tidy(() => tf.max(tf.abs(tf.sub(a, b))).dataSync()[0]);
}

const WEIGHT_NAMES = ['query/kernel', 'query/bias', 'key/kernel', 'key/bias', 'value/kernel', 'value/bias', 'attention_output/kernel', 'attention_output/bias'];

describe('einsumMatMul', () => {
  it('equals tfjs einsum on the equations attention uses (and others)', () => {
    const cases: Array<[string, number[], number[]]> = [
      ['abc,cde->abde', [2, 4, 6], [6, 2, 3]], // projection
      ['aecd,abcd->acbe', [2, 5, 2, 3], [2, 4, 2, 3]], // scores
      ['acbe,aecd->abcd', [2, 2, 4, 5], [2, 5, 2, 4]], // combine
      ['abcd,cde->abe', [2, 4, 2, 3], [2, 3, 6]], // output projection
      ['ab,bc->ac', [3, 4], [4, 5]],
      ['ab,cb->ca', [3, 4], [5, 4]],
      ['abc,b->ac', [2, 3, 4], [3]],
      ['ab,cd->abcd', [2, 3], [4, 5]],
    ];
    cases.forEach(([equation, sa, sb], i) => {
      const a = tf.randomNormal(sa, 0, 1, 'float32', 20 + i);
      const b = tf.randomNormal(sb, 0, 1, 'float32', 40 + i);
      expect(maxDiff(einsumMatMul(equation, a, b), tf.einsum(equation, a, b)), equation).toBeLessThan(1e-5);
    });
    // An axis of one operand only is summed first (tfjs's cpu einsum cannot broadcast this one).
    const [a, b] = [tf.randomNormal([2, 3, 4], 0, 1, 'float32', 60), tf.randomNormal([4, 5], 0, 1, 'float32', 61)];
    expect(maxDiff(einsumMatMul('abc,cd->ad', a, b), tf.matMul(tf.sum(a, 1), b))).toBeLessThan(1e-5);
    expect(() => einsumMatMul('...b,bc->...c', tf.zeros([2, 3]), tf.zeros([3, 4]))).toThrow(/two operands without ellipsis/);
    expect(() => einsumMatMul('ab,bc->ac', tf.zeros([2, 3]), tf.zeros([4, 4]))).toThrow(/axis "b" is 3 in one operand and 4/);
  });
});

describe('MultiHeadAttention', () => {
  it('replaces tfjs-layers\' registration and exposes its projections as weights named like Keras\'s', () => {
    expect(tf.serialization.SerializationMap.getMap().classNameMap.MultiHeadAttention[0]).toBe(MultiHeadAttention);
    const layer = new MultiHeadAttention({ numHeads: 2, keyDim: 3, name: 'mha' });
    const x = tf.randomNormal([2, 4, 6], 0, 1, 'float32', 1);
    layer.apply(x, { value: x });
    expect(layer.trainableWeights.map((w) => w.originalName)).toEqual(WEIGHT_NAMES.map((n) => `mha/${n}`));
    expect(layer.weights.map((w) => w.shape)).toEqual([[6, 2, 3], [2, 3], [6, 2, 3], [2, 3], [6, 2, 3], [2, 3], [2, 3, 6], [6]]);
    expect(layer.nonTrainableWeights).toEqual([]);
    expect(layer.countParams()).toBe(3 * (6 * 6 + 6) + 6 * 6 + 6);
    layer.trainable = false;
    expect(layer.trainableWeights).toEqual([]);
    expect(layer.nonTrainableWeights.length).toBe(8);
  });

  it('equals attention written out with tfjs ops: self-attention, list inputs, causal mask, cross-attention with its own key', () => {
    const layer = new MultiHeadAttention({ numHeads: 2, keyDim: 3, name: 'self' });
    const x = tf.randomNormal([3, 4, 6], 0, 1, 'float32', 2);
    const y = layer.apply(x, { value: x }) as tf.Tensor;
    const w = weightsOf(layer);
    expect(maxDiff(y, attention(w, x, x, x))).toBeLessThan(1e-5);
    // The list form (a saved model's node) and tfjs's keyword form agree; so does the causal mask.
    expect(maxDiff(layer.apply([x, x]) as tf.Tensor, y)).toBe(0);
    const causal = layer.apply([x, x], { useCausalMask: true }) as tf.Tensor;
    expect(maxDiff(causal, attention(w, x, x, x, { causal: true }))).toBeLessThan(1e-5);
    expect(maxDiff(causal, y)).toBeGreaterThan(1e-3);

    // Query [4, 6] attends to 5 steps of value [5, 6] under a key [5, 7]; value heads of 4, output 5 wide.
    const cross = new MultiHeadAttention({ numHeads: 2, keyDim: 3, valueDim: 4, outputShape: [5], name: 'cross' });
    const q = tf.randomNormal([2, 4, 6], 0, 1, 'float32', 3);
    const v = tf.randomNormal([2, 5, 6], 0, 1, 'float32', 4);
    const k = tf.randomNormal([2, 5, 7], 0, 1, 'float32', 5);
    const out = cross.apply([q, v, k]) as tf.Tensor;
    expect(out.shape).toEqual([2, 4, 5]);
    expect(cross.weights.map((w) => w.shape)).toEqual([[6, 2, 3], [2, 3], [7, 2, 3], [2, 3], [6, 2, 4], [2, 4], [2, 4, 5], [5]]);
    expect(maxDiff(out, attention(weightsOf(cross), q, v, k))).toBeLessThan(1e-5);
    expect(maxDiff(cross.apply(q, { value: v, key: k }) as tf.Tensor, out)).toBe(0);
  });

  it('sends gradients to every projection, equal to the written-out attention\'s', () => {
    const layer = new MultiHeadAttention({ numHeads: 2, keyDim: 3, name: 'grad' });
    const x = tf.randomNormal([2, 4, 6], 0, 1, 'float32', 6);
    const target = tf.randomNormal([2, 4, 6], 0, 1, 'float32', 7);
    layer.apply([x, x]);
    const vars = layer.trainableWeights.map((w) => w.read() as tf.Variable);
    expect(vars.length).toBe(8);
    const loss = (y: tf.Tensor) => tf.sum(tf.square(tf.sub(y, target))) as tf.Scalar;
    const ours = tf.variableGrads(() => loss(layer.apply([x, x], { useCausalMask: true, training: true }) as tf.Tensor), vars);
    const written = tf.variableGrads(() => loss(attention(weightsOf(layer), x, x, x, { causal: true })), vars);
    layer.trainableWeights.forEach((w, i) => {
      const g = ours.grads[vars[i].name];
      expect(g.shape, w.originalName).toEqual(w.shape);
      expect(maxDiff(g, written.grads[vars[i].name]), w.originalName).toBeLessThan(1e-4);
      const norm = tf.norm(g).dataSync()[0];
      // Softmax ignores what is added to every score of a row, so q·b_key (the key bias's whole
      // contribution) has no gradient: rounding noise in the written-out attention, exactly zero in the
      // layer (the same for every batch slicing). Every other weight moves.
      if (w.originalName === 'grad/key/bias') expect(norm).toBe(0);
      else expect(norm, w.originalName).toBeGreaterThan(1e-3);
    });
  });

  it('draws attention dropout from the mask it is given, and refuses to train without one', () => {
    const layer = new MultiHeadAttention({ numHeads: 2, keyDim: 3, dropout: 0.5, name: 'dropping' });
    const x = tf.randomNormal([3, 4, 6], 0, 1, 'float32', 8);
    const y = layer.apply([x, x]) as tf.Tensor; // inference: no dropout
    expect(maxDiff(y, attention(weightsOf(layer), x, x, x))).toBeLessThan(1e-5);
    expect(() => layer.apply([x, x], { training: true })).toThrow(/MultiHeadAttention layer "dropping" has dropout 0.5/);
    const pass = { seed: 3, step: 1, samples: [10, 11, 12] };
    const mask = (shape: number[]) => dropoutMask(shape, 0.5, 'dropping', pass);
    const dropped = layer.apply([x, x], { training: true, attentionDropoutMask: mask }) as tf.Tensor;
    const keep = mask([3, 2, 4, 4]);
    expect(maxDiff(dropped, attention(weightsOf(layer), x, x, x, { keep }))).toBeLessThan(1e-5);
    expect(maxDiff(dropped, layer.apply([x, x], { training: true, attentionDropoutMask: mask }) as tf.Tensor)).toBe(0);
  });

  it('gives seeded query, key and value projections their own seeds', () => {
    const layer = new MultiHeadAttention({ numHeads: 2, keyDim: 3, kernelInitializer: tfl.initializers.glorotUniform({ seed: 5 }), name: 'seeded' });
    layer.apply([tf.zeros([1, 4, 6]), tf.zeros([1, 4, 6])]);
    const w = weightsOf(layer);
    expect(maxDiff(w.get('query/kernel')!, w.get('key/kernel')!)).toBeGreaterThan(0.01);
    expect(maxDiff(w.get('key/kernel')!, w.get('value/kernel')!)).toBeGreaterThan(0.01);
    const again = new MultiHeadAttention({ numHeads: 2, keyDim: 3, kernelInitializer: tfl.initializers.glorotUniform({ seed: 5 }), name: 'seeded' });
    again.apply([tf.zeros([1, 4, 6]), tf.zeros([1, 4, 6])]);
    expect(maxDiff(weightsOf(again).get('value/kernel')!, w.get('value/kernel')!)).toBe(0);
  });
});

describe('MultiHeadAttention on the wasm backend (the agents\')', () => {
  it('computes the cpu backend\'s output and gradients, causal mask included', async () => {
    const layer = new MultiHeadAttention({ numHeads: 2, keyDim: 3, name: 'wasm' });
    const x = tf.randomNormal([2, 4, 6], 0, 1, 'float32', 12);
    layer.apply([x, x]);
    const vars = layer.trainableWeights.map((w) => w.read() as tf.Variable);
    const run = () => {
      const { value, grads } = tf.variableGrads(() => tf.sum(tf.square(layer.apply([x, x], { useCausalMask: true, training: true }) as tf.Tensor)) as tf.Scalar, vars);
      return [value, ...vars.map((v) => grads[v.name])].map((t) => t.dataSync() as Float32Array);
    };
    const cpu = run();
    await tf.setBackend('wasm');
    registerWasmGradientKernels();
    try {
      const wasm = run();
      cpu.forEach((values, i) => expect(maxDiff(tf.tensor(wasm[i]), tf.tensor(values)), String(i)).toBeLessThan(1e-4));
    } finally {
      await tf.setBackend('cpu');
    }
  });
});

describe('a model with MultiHeadAttention', () => {
  /** input [4, 6] → causal self-attention → Add residual → LayerNormalization → Flatten → Dense(2). */
  function block(inputName = 'seq'): tfl.LayersModel {
    const input = tfl.input({ shape: [4, 6], name: inputName });
    const mha = new MultiHeadAttention({ numHeads: 2, keyDim: 3, name: 'mha' }).apply(input, { value: input, useCausalMask: true }) as tfl.SymbolicTensor;
    const add = tfl.layers.add({ name: 'residual' }).apply([input, mha]) as tfl.SymbolicTensor;
    const norm = tfl.layers.layerNormalization({ name: 'norm' }).apply(add) as tfl.SymbolicTensor;
    const flat = tfl.layers.flatten({ name: 'flat' }).apply(norm) as tfl.SymbolicTensor;
    const head = tfl.layers.dense({ units: 2, name: 'head' }).apply(flat) as tfl.SymbolicTensor;
    return tfl.model({ inputs: input, outputs: head, name: 'attention_block' });
  }

  async function save(model: tfl.LayersModel): Promise<tf.io.ModelArtifacts> {
    let saved: tf.io.ModelArtifacts | undefined;
    await model.save(
      tf.io.withSaveHandler(async (artifacts) => {
        saved = artifacts;
        return { modelArtifactsInfo: { dateSaved: new Date(), modelTopologyType: 'JSON' } };
      }),
    );
    return saved!;
  }

  type Json = Record<string, unknown>;
  const layerJson = (artifacts: tf.io.ModelArtifacts, name: string) => ((artifacts.modelTopology as Json).config as { layers: Json[] }).layers.find((l) => l.name === name)!;

  it('builds symbolically, saves, and loads back with identical weights and predictions (the causal mask kept)', async () => {
    const model = block();
    expect(model.outputs[0].shape).toEqual([null, 2]);
    expect(model.getLayer('mha').outputShape).toEqual([null, 4, 6]);
    expect(model.weights.map((w) => w.originalName).filter((n) => n.startsWith('mha/'))).toEqual(WEIGHT_NAMES.map((n) => `mha/${n}`));
    const x = tf.randomNormal([5, 4, 6], 0, 1, 'float32', 9);
    const expected = model.predict(x) as tf.Tensor;

    const artifacts = await save(model);
    expect(artifacts.weightSpecs!.map((s) => s.name)).toEqual(model.weights.map((w) => w.originalName));
    const mha = layerJson(artifacts, 'mha');
    // The node lists query and value as inputs; its keyword arguments (the causal mask) are saved.
    expect(mha.inbound_nodes).toEqual([[['seq', 0, 0, { use_causal_mask: true }], ['seq', 0, 0, { use_causal_mask: true }]]]);
    expect((mha.config as Json).query_shape).toEqual([null, 4, 6]);

    const loaded = await tfl.loadLayersModel(tf.io.fromMemory(artifacts));
    expect(loaded.getLayer('mha')).toBeInstanceOf(MultiHeadAttention);
    expect(loaded.weights.map((w) => w.originalName)).toEqual(model.weights.map((w) => w.originalName));
    loaded.weights.forEach((w, i) => expect(maxDiff(w.read(), model.weights[i].read()), w.originalName).toBe(0));
    expect(maxDiff(loaded.predict(x) as tf.Tensor, expected)).toBe(0);

    // Causal: the attention output at step t does not see later steps (tfjs's executor drops a node's
    // keyword arguments; the layer uses the one its saved call recorded).
    const inner = tfl.model({ inputs: loaded.inputs, outputs: loaded.getLayer('mha').output as tfl.SymbolicTensor });
    const later = tf.concat([x.slice([0, 0, 0], [5, 3, 6]), tf.randomNormal([5, 1, 6], 0, 1, 'float32', 10)], 1);
    const [a, b] = [inner.predict(x) as tf.Tensor, inner.predict(later) as tf.Tensor];
    expect(maxDiff(a.slice([0, 0, 0], [5, 3, 6]), b.slice([0, 0, 0], [5, 3, 6]))).toBeLessThan(1e-6);
    expect(maxDiff(a.slice([0, 3, 0], [5, 1, 6]), b.slice([0, 3, 0], [5, 1, 6]))).toBeGreaterThan(1e-3);

    // getWeights / setWeights round-trip through the projections.
    const fresh = block();
    fresh.setWeights(model.getWeights());
    expect(maxDiff(fresh.predict(x) as tf.Tensor, expected)).toBe(0);
  });

  it('builds its weights at deserialisation from the shapes in its config, named by its layer', () => {
    const config = { numHeads: 2, keyDim: 3, name: 'restored', queryShape: [null, 4, 6], valueShape: [null, 4, 6], keyShape: [null, 4, 6] };
    const [cls, fromConfig] = tf.serialization.SerializationMap.getMap().classNameMap.MultiHeadAttention;
    const layer = fromConfig(cls, config) as MultiHeadAttention;
    expect(layer.built).toBe(true);
    expect(layer.weights.map((w) => w.originalName)).toEqual(WEIGHT_NAMES.map((n) => `restored/${n}`));
  });

  it('loads a Keras 2 file (value as a keyword tensor reference, no shapes in the config) with the same predictions', async () => {
    const model = block('input_1');
    const x = tf.randomNormal([3, 4, 6], 0, 1, 'float32', 11);
    const artifacts = await save(model);
    const mha = layerJson(artifacts, 'mha');
    // As tf.keras writes `mha(x, x, use_causal_mask=True)`: one positional tensor, the rest keyword
    // arguments (tfjs camel-cases the reference's layer name on reading: input_1 → input1).
    mha.inbound_nodes = [[['input_1', 0, 0, { value: ['input_1', 0, 0], use_causal_mask: true }]]];
    const config = mha.config as Json;
    delete config.query_shape;
    delete config.value_shape;
    delete config.key_shape;
    const loaded = await tfl.loadLayersModel(tf.io.fromMemory(artifacts));
    expect(loaded.weights.map((w) => w.originalName)).toEqual(model.weights.map((w) => w.originalName));
    expect(maxDiff(loaded.predict(x) as tf.Tensor, model.predict(x) as tf.Tensor)).toBe(0);
    const node = loaded.getLayer('mha').inboundNodes[0];
    expect(node.inputTensors.map((t) => t.sourceLayer.name)).toEqual(['input_1', 'input_1']);
    expect(node.callArgs).toEqual({ useCausalMask: true });
  });
});
