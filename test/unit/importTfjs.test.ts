import '@tensorflow/tfjs-backend-cpu';
// tfjs-layers' orthogonal initializer (LSTM, GRU) calls chained tensor methods.
import '@tensorflow/tfjs-core/dist/public/chained_ops/register_all_chained_ops';
import * as tfl from '@tensorflow/tfjs-layers';
import { describe, expect, it } from 'vitest';
import { totalParams, totalWeights } from '../../engine/model/graph.js';
import { importKerasModel } from '../../engine/model/import/importKeras.js';

/**
 * The importer against tfjs-layers itself: each model is built with tfjs, serialised with
 * `toJSON(null, false)`, imported, and must match tfjs's parameter counts and every layer's output shape.
 */
type Tensor = tfl.SymbolicTensor;
const L = tfl.layers;
const apply = (layer: { apply(x: Tensor | Tensor[]): unknown }, x: Tensor | Tensor[]) => layer.apply(x) as Tensor;
const size = (shape: number[]) => shape.reduce((a, b) => a * b, 1);

function expectSameAsTfjs(model: tfl.LayersModel): void {
  const topology = model.toJSON(null, false);
  for (const doc of [topology, { modelTopology: topology, weightsManifest: [] }, JSON.stringify({ modelTopology: topology })]) {
    const { graph, diagnostics } = importKerasModel(doc);
    expect(diagnostics).toEqual([]);
    expect(totalWeights(graph)).toBe(model.countParams());
    expect(totalParams(graph)).toBe(model.trainableWeights.reduce((sum, w) => sum + size(w.shape as number[]), 0));
    for (const layer of model.layers) {
      const node = graph.layers.find((l) => l.id === layer.name);
      expect(node, `layer ${layer.name}`).toBeDefined();
      expect(node!.outputShape, `shape of ${layer.name}`).toEqual((layer.outputShape as number[]).slice(1));
    }
    expect(graph.outputs).toEqual(model.outputs.map((o) => o.sourceLayer.name));
  }
}

describe('importing tfjs-layers models', () => {
  it('an MLP (Sequential, no InputLayer)', () => {
    const model = tfl.sequential({
      layers: [L.dense({ units: 128, activation: 'relu', inputShape: [784] }), L.dropout({ rate: 0.2 }), L.dense({ units: 10, activation: 'softmax' })],
    });
    expect(model.countParams()).toBe(101_770);
    expectSameAsTfjs(model);
    const { graph } = importKerasModel(model.toJSON(null, false));
    expect(graph.layers.map((l) => l.spec.kind)).toEqual(['input', 'dense', 'dropout', 'dense']);
  });

  it('a small CNN with batch normalisation and dropout', () => {
    const model = tfl.sequential({
      layers: [
        L.conv2d({ filters: 16, kernelSize: 3, padding: 'same', activation: 'relu', inputShape: [32, 32, 3] }),
        L.batchNormalization(),
        L.maxPooling2d({ poolSize: 2 }),
        L.conv2d({ filters: 32, kernelSize: [5, 3], strides: [1, 2], useBias: false }),
        L.batchNormalization({ scale: false }),
        L.activation({ activation: 'elu' }),
        L.averagePooling2d({ poolSize: 2, padding: 'same' }),
        L.dropout({ rate: 0.25 }),
        L.flatten(),
        L.dense({ units: 10, activation: 'softmax' }),
      ],
    });
    expectSameAsTfjs(model);
  });

  it('a MobileNet-like network: depthwise + pointwise, separable, residual add, global pooling', () => {
    const input = tfl.input({ shape: [64, 64, 3] });
    let x = apply(L.conv2d({ filters: 16, kernelSize: 3, strides: 2, padding: 'same', useBias: false }), input);
    x = apply(L.reLU({ maxValue: 6 }), apply(L.batchNormalization(), x));
    const dw = apply(L.depthwiseConv2d({ kernelSize: 3, padding: 'same', useBias: false }), x);
    const pw = apply(L.conv2d({ filters: 16, kernelSize: 1, useBias: false }), apply(L.reLU(), apply(L.batchNormalization(), dw)));
    x = apply(L.add(), [x, apply(L.batchNormalization(), pw)]);
    // tfjs drops SeparableConv2D's depth_multiplier from toJSON and ignores dilation in DepthwiseConv2D's
    // output shape, so those two options are checked against hand counts in importKeras.test.ts.
    x = apply(L.separableConv2d({ filters: 32, kernelSize: 3, strides: 2, padding: 'same', activation: 'relu' }), x);
    x = apply(L.depthwiseConv2d({ kernelSize: 3, depthMultiplier: 2 }), x);
    x = apply(L.globalAveragePooling2d({}), x);
    const output = apply(L.dense({ units: 10, activation: 'softmax' }), apply(L.dropout({ rate: 0.1 }), x));
    expectSameAsTfjs(tfl.model({ inputs: input, outputs: output }));
  });

  it('an LSTM text classifier: embedding → LSTM → LSTM → dense', () => {
    const model = tfl.sequential({
      layers: [
        L.embedding({ inputDim: 1000, outputDim: 32, inputLength: 20 }),
        L.lstm({ units: 24, returnSequences: true }),
        L.lstm({ units: 16 }),
        L.dense({ units: 1, activation: 'sigmoid' }),
      ],
    });
    // Hand count: LSTM 4·(u·(f+u) + u).
    expect(model.countParams()).toBe(1000 * 32 + 4 * (24 * (32 + 24) + 24) + 4 * (16 * (24 + 16) + 16) + 17);
    expectSameAsTfjs(model);
  });

  it('GRU and SimpleRNN, plain and Bidirectional with every merge mode', () => {
    const model = tfl.sequential({
      layers: [
        L.embedding({ inputDim: 500, outputDim: 16, inputLength: 12 }),
        L.bidirectional({ layer: L.gru({ units: 8, returnSequences: true }) as tfl.RNN, mergeMode: 'concat' }),
        L.bidirectional({ layer: L.lstm({ units: 6, returnSequences: true }) as tfl.RNN, mergeMode: 'sum' }),
        L.bidirectional({ layer: L.simpleRNN({ units: 5, returnSequences: true }) as tfl.RNN, mergeMode: 'ave' }),
        L.bidirectional({ layer: L.gru({ units: 4, returnSequences: true }) as tfl.RNN, mergeMode: 'mul' }),
        L.gru({ units: 7 }),
        L.dense({ units: 3 }),
      ],
    });
    expectSameAsTfjs(model);
  });

  it('TimeDistributed dense and convolution over a sequence of frames', () => {
    const model = tfl.sequential({
      layers: [
        L.timeDistributed({ layer: L.conv2d({ filters: 4, kernelSize: 3, activation: 'relu' }), inputShape: [5, 16, 16, 1] }),
        L.timeDistributed({ layer: L.maxPooling2d({ poolSize: 2 }) }),
        L.timeDistributed({ layer: L.flatten() }),
        L.timeDistributed({ layer: L.dense({ units: 12, activation: 'tanh' }) }),
        L.lstm({ units: 8, returnSequences: true }),
        L.timeDistributed({ layer: L.dense({ units: 2 }) }),
      ],
    });
    expectSameAsTfjs(model);
  });

  it('a multi-branch functional model: two inputs, a shared layer, concatenate, add, multiply', () => {
    const a = tfl.input({ shape: [16], name: 'left' });
    const b = tfl.input({ shape: [16], name: 'right' });
    const shared = L.dense({ units: 8, activation: 'relu', name: 'shared' });
    const sa = apply(shared, a);
    const sb = apply(shared, b);
    const joined = apply(L.concatenate(), [sa, sb]);
    const summed = apply(L.add(), [sa, sb]);
    const product = apply(L.multiply(), [sa, apply(L.dense({ units: 8 }), b)]);
    const mixed = apply(L.concatenate({ axis: 1 }), [joined, summed, product, apply(L.average(), [sa, sb]), apply(L.maximum(), [sa, sb])]);
    const out1 = apply(L.dense({ units: 4, activation: 'softmax', name: 'class' }), mixed);
    const out2 = apply(L.dense({ units: 1, name: 'score' }), apply(L.minimum(), [sa, sb]));
    const model = tfl.model({ inputs: [a, b], outputs: [out1, out2] });
    expectSameAsTfjs(model);
    const { graph } = importKerasModel(model.toJSON(null, false));
    // The second call of the shared layer reuses its weights: FLOPs but no parameters.
    const second = graph.layers.find((l) => l.id === 'shared@1')!;
    expect(second.inputs).toEqual(['right']);
    expect([second.params, second.forwardFlops]).toEqual([0, 2 * 16 * 8]);
    expect(graph.layers.filter((l) => l.spec.kind === 'input').map((l) => l.id)).toEqual(['left', 'right']);
  });

  it('a convolutional autoencoder: ZeroPadding2D, UpSampling2D, Conv2DTranspose', () => {
    const model = tfl.sequential({
      layers: [
        L.conv2d({ filters: 16, kernelSize: 3, strides: 2, padding: 'same', activation: 'relu', inputShape: [28, 28, 1] }),
        L.zeroPadding2d({ padding: [[1, 2], [0, 1]] }),
        L.conv2d({ filters: 8, kernelSize: 3, strides: 2 }),
        L.upSampling2d({ size: [2, 2] }),
        L.conv2dTranspose({ filters: 8, kernelSize: 3, strides: 2, padding: 'same', activation: 'relu' }),
        L.conv2dTranspose({ filters: 4, kernelSize: 4, strides: 1, useBias: false }),
        L.conv2d({ filters: 1, kernelSize: 3, padding: 'same', activation: 'sigmoid' }),
      ],
    });
    expectSameAsTfjs(model);
  });

  it('LayerNormalization, Permute, Reshape, Conv1D, 1-D pooling, activation layers', () => {
    const input = tfl.input({ shape: [20, 12] });
    // tfjs sizes 'causal' like 'valid' (Keras keeps the length); causal is checked in importKeras.test.ts.
    let x = apply(L.conv1d({ filters: 16, kernelSize: 3, padding: 'same', dilationRate: 2 }), input);
    x = apply(L.layerNormalization({ axis: -1 }), x);
    x = apply(L.maxPooling1d({ poolSize: 2 }), x);
    x = apply(L.permute({ dims: [2, 1] }), x);
    x = apply(L.reshape({ targetShape: [8, 20] }), x);
    x = apply(L.conv1d({ filters: 6, kernelSize: 2, strides: 2, activation: 'relu' }), x);
    const avg = apply(L.globalAveragePooling1d(), apply(L.averagePooling1d({ poolSize: 2, strides: 1, padding: 'same' }), x));
    const max = apply(L.globalMaxPooling1d(), x);
    x = apply(L.softmax(), apply(L.dense({ units: 5 }), apply(L.concatenate(), [avg, max])));
    expectSameAsTfjs(tfl.model({ inputs: input, outputs: x }));
  });

  it('a nested model is inlined: a Sequential base shared by two branches (siamese)', () => {
    const base = tfl.sequential({ name: 'base', layers: [L.dense({ units: 12, activation: 'relu', inputShape: [6], name: 'hidden' }), L.dense({ units: 4, name: 'embed' })] });
    const a = tfl.input({ shape: [6], name: 'a' });
    const b = tfl.input({ shape: [6], name: 'b' });
    const distance = apply(L.concatenate({ name: 'pair' }), [apply(base, a), apply(base, b)]);
    const model = tfl.model({ inputs: [a, b], outputs: apply(L.dense({ units: 1, name: 'same' }), distance) });
    const { graph, diagnostics } = importKerasModel(model.toJSON(null, false));
    expect(diagnostics).toEqual([]);
    expect(totalWeights(graph)).toBe(model.countParams());
    expect(graph.layers.map((l) => l.id)).toEqual(['a', 'b', 'base/hidden', 'base/embed', 'base@1/hidden', 'base@1/embed', 'pair', 'same']);
    expect(graph.layers.find((l) => l.id === 'pair')!.inputs).toEqual(['base/embed', 'base@1/embed']);
    // The second call shares the weights: FLOPs, no parameters.
    expect(graph.layers.find((l) => l.id === 'base@1/hidden')).toMatchObject({ params: 0, forwardFlops: 2 * 6 * 12 });
    // tfjs does not serialise a model's `trainable`; Keras 3 does, and a frozen base holds no trainable weights.
    const topology = model.toJSON(null, false) as { config: { layers: { name: string; config: Record<string, unknown> }[] } };
    topology.config.layers.find((l) => l.name === 'base')!.config.trainable = false;
    const frozen = importKerasModel(topology).graph;
    expect([totalParams(frozen), totalWeights(frozen)]).toEqual([8 + 1, model.countParams()]);
  });

  it('a functional block nested in a Sequential model', () => {
    const x = tfl.input({ shape: [8, 8, 4], name: 'block_in' });
    const y = apply(L.conv2d({ filters: 4, kernelSize: 3, padding: 'same', name: 'block_conv' }), x);
    const block = tfl.model({ inputs: x, outputs: apply(L.add({ name: 'block_add' }), [x, y]), name: 'block' });
    const model = tfl.sequential({ layers: [L.conv2d({ filters: 4, kernelSize: 1, inputShape: [8, 8, 3], name: 'stem' }), block, L.flatten({ name: 'flat' }), L.dense({ units: 2, name: 'out' })] });
    const { graph, diagnostics } = importKerasModel({ modelTopology: model.toJSON(null, false) });
    expect(diagnostics).toEqual([]);
    expect(totalWeights(graph)).toBe(model.countParams());
    expect(graph.layers.map((l) => [l.id, l.inputs])).toEqual([
      ['stem_input', []],
      ['stem', ['stem_input']],
      ['block/block_conv', ['stem']],
      ['block/block_add', ['stem', 'block/block_conv']],
      ['flat', ['block/block_add']],
      ['out', ['flat']],
    ]);
  });

  it('a frozen layer counts as non-trainable parameters', () => {
    const frozen = L.dense({ units: 32, inputShape: [10], trainable: false });
    const model = tfl.sequential({ layers: [frozen, L.dense({ units: 2 })] });
    expectSameAsTfjs(model);
    const { graph } = importKerasModel(model.toJSON(null, false));
    expect(graph.layers[1].nonTrainableParams).toBe(10 * 32 + 32);
  });
});
