import { describe, expect, it } from 'vitest';
import { GraphBuilder } from '../../engine/model/builder.js';
import { layerFacts } from '../../engine/model/layerFacts.js';
import type { LayerSpec, RecurrentSpec } from '../../engine/model/layerSpec.js';

/** Per-layer shape and cost facts against hand computations. */
const lstm: RecurrentSpec = { kind: 'recurrent', cell: 'lstm', units: 8, returnSequences: true, useBias: true, resetAfter: false };

describe('layer facts', () => {
  it('denseNd applies to the last axis: FLOPs repeat over the leading axes', () => {
    const f = layerFacts({ kind: 'denseNd', units: 32, useBias: true, activation: 'gelu' }, [[10, 4, 16]]);
    expect(f.outputShape).toEqual([10, 4, 32]);
    expect(f.params).toBe(16 * 32 + 32);
    expect(f.forwardFlops).toBe(2 * 40 * 16 * 32);
    expect(f.backwardFlops).toBe(2 * f.forwardFlops);
  });

  it('convolutions: dilation, strides and the depthwise / separable split', () => {
    const conv = layerFacts({ kind: 'conv', rank: 2, filters: 8, kernelSize: [3, 3], strides: [2, 2], dilation: [1, 1], padding: 'valid', useBias: false, activation: 'relu' }, [[9, 9, 4]]);
    expect(conv.outputShape).toEqual([4, 4, 8]);
    expect([conv.params, conv.forwardFlops]).toEqual([3 * 3 * 4 * 8, 2 * 16 * 8 * 9 * 4]);
    const dilated = layerFacts({ kind: 'conv', rank: 1, filters: 2, kernelSize: [3], strides: [1], dilation: [3], padding: 'valid', useBias: true, activation: 'linear' }, [[20, 5]]);
    expect(dilated.outputShape).toEqual([14, 2]);
    const separable = layerFacts(
      { kind: 'separableConv2d', filters: 16, kernelSize: [3, 3], strides: [1, 1], dilation: [1, 1], padding: 'same', depthMultiplier: 1, useBias: true, activation: 'relu' },
      [[8, 8, 4]],
    );
    expect(separable.forwardFlops).toBe(2 * 64 * (4 * 9 + 4 * 16));
    const transpose = layerFacts({ kind: 'conv2dTranspose', filters: 3, kernelSize: [3, 3], strides: [2, 2], padding: 'valid', useBias: true, activation: 'linear' }, [[5, 5, 2]]);
    expect(transpose.outputShape).toEqual([11, 11, 3]);
  });

  it('recurrent layers, Bidirectional and TimeDistributed', () => {
    const one = layerFacts(lstm, [[6, 4]]);
    expect([one.outputShape, one.params, one.forwardFlops]).toEqual([[6, 8], 4 * (8 * 12 + 8), 2 * 6 * 4 * 8 * 12]);
    const both = layerFacts({ kind: 'bidirectional', layer: lstm, mergeMode: 'concat' }, [[6, 4]]);
    expect([both.outputShape, both.params]).toEqual([[6, 16], 2 * one.params]);
    const td = layerFacts({ kind: 'timeDistributed', layer: { kind: 'dense', units: 3, activation: 'relu' } }, [[7, 5]]);
    expect([td.outputShape, td.params, td.forwardFlops]).toEqual([[7, 3], 18, 7 * 2 * 15]);
  });

  it('merges broadcast and concatenate sums one axis', () => {
    expect(layerFacts({ kind: 'merge', op: 'multiply' }, [[4, 1], [4, 6]]).outputShape).toEqual([4, 6]);
    expect(layerFacts({ kind: 'concatenate', axis: 0 }, [[2, 6], [3, 6]]).outputShape).toEqual([5, 6]);
    expect(() => layerFacts({ kind: 'concatenate', axis: -1 }, [[2, 6], [3, 6]])).toThrow(/equal elsewhere/);
  });

  it('normalisation: batch-norm statistics are non-trainable', () => {
    const bn = layerFacts({ kind: 'batchNorm', axis: -1, center: true, scale: true }, [[7, 7, 32]]);
    expect([bn.params, bn.nonTrainableParams]).toEqual([64, 64]);
    const ln = layerFacts({ kind: 'layerNorm', axes: [-2, -1], center: true, scale: false }, [[3, 4, 5]]);
    expect([ln.params, ln.nonTrainableParams]).toEqual([20, 0]);
  });

  it('attention FLOPs: projections, scores and weighted sums', () => {
    const f = layerFacts({ kind: 'multiHeadAttention', numHeads: 2, keyDim: 4, valueDim: 4, useBias: false, causal: true }, [[10, 8], [10, 8]]);
    const projections = 4 * 10 * 8 * 8;
    expect(f.forwardFlops).toBe(2 * (projections + 2 * 2 * 10 * 10 * 4) + 5 * 2 * 100);
    expect(f.params).toBe(4 * 8 * 8);
  });

  it('an opaque layer passes its input shape through and costs nothing', () => {
    expect(layerFacts({ kind: 'opaque', className: 'Mystery', config: {} }, [[3, 5]])).toEqual({ outputShape: [3, 5], params: 0, nonTrainableParams: 0, forwardFlops: 0, backwardFlops: 0 });
  });

  it('shape errors say what does not fit', () => {
    const bad: [LayerSpec, number[][], RegExp][] = [
      [{ kind: 'permute', dims: [1, 1] }, [[2, 3]], /not a permutation/],
      [{ kind: 'pool', op: 'max', rank: 2, poolSize: [5, 5], strides: [1, 1], padding: 'valid' }, [[3, 3, 1]], /larger than/],
      [{ kind: 'merge', op: 'add' }, [[4]], /at least two/],
      [{ kind: 'positionEmbedding', maxLength: 8 }, [[9, 4]], /holds 8 positions/],
    ];
    for (const [spec, inputs, message] of bad) expect(() => layerFacts(spec, inputs)).toThrow(message);
  });
});

describe('GraphBuilder', () => {
  it('builds a branching graph with activation bytes and rejects bad wiring', () => {
    const b = new GraphBuilder('branchy');
    const x = b.add('x', { kind: 'input', shape: [4, 4, 2] });
    const left = b.add('left', { kind: 'conv', rank: 2, filters: 2, kernelSize: [1, 1], strides: [1, 1], dilation: [1, 1], padding: 'same', useBias: true, activation: 'linear' }, [x], 'block');
    const sum = b.add('sum', { kind: 'merge', op: 'add' }, [x, left], 'block');
    const graph = b.build('test', [sum]);
    expect(graph.layers.map((l) => l.activationBytes)).toEqual([128, 128, 128]);
    expect(graph.numClasses).toBeUndefined();
    expect(() => b.add('sum', { kind: 'flatten' }, [sum])).toThrow(/used twice/);
    expect(() => b.add('late', { kind: 'flatten' }, ['missing'])).toThrow(/input "missing" is not defined before it/);
    expect(() => b.add('bad', { kind: 'dense', units: 2, activation: 'relu' }, [sum])).toThrow(/layer "bad": A dense layer needs a flat input/);
  });
});
