import { describe, expect, it } from 'vitest';
import type { LayerNode, LayerSpec } from '../../engine/model/graph.js';
import { zooModel } from '../../engine/model/zoo.js';
import { naturalOutput, splitAxis, weightLayout } from '../../engine/plan/sbp.js';

const mlp = zooModel('mlp');
/** A layer of another kind, borrowing the rest of its fields from mlp's dense_1. */
const node = (spec: LayerSpec, outputShape: number[]): LayerNode => ({ ...mlp.layers[1], spec, outputShape });

describe('SBP', () => {
  it('reads split axes', () => {
    expect([splitAxis('S(0)'), splitAxis('S(3)'), splitAxis('B'), splitAxis('P')]).toEqual([0, 3, undefined, undefined]);
  });

  it('Dense: row-parallel leaves partial sums, column-parallel splits the units', () => {
    const dense = weightLayout(mlp.layers[1], [784]);
    expect(dense).toEqual({ shape: [784, 512], contracted: 0, produced: 1, outputAxis: 1 });
    expect([naturalOutput('S(0)', dense), naturalOutput('S(1)', dense), naturalOutput('B', dense)]).toEqual(['P', 'S(1)', 'B']);
  });

  it('knows the weight layouts of Dense on sequences, embeddings and convolutions', () => {
    const denseNd = node({ kind: 'denseNd', units: 256, useBias: true, activation: 'gelu' }, [16, 256]);
    expect(weightLayout(denseNd, [16, 64])).toEqual({ shape: [64, 256], contracted: 0, produced: 1, outputAxis: 2 });
    const embedding = node({ kind: 'embedding', inputDim: 1000, outputDim: 64 }, [16, 64]);
    expect(naturalOutput('S(0)', weightLayout(embedding, [16]))).toBe('P'); // vocabulary-parallel
    const conv2d = node({ kind: 'conv2d', filters: 8, kernelSize: [3, 3], strides: [1, 1], padding: 'same', activation: 'relu' }, [28, 28, 8]);
    expect(weightLayout(conv2d, [28, 28, 1])).toEqual({ shape: [3, 3, 1, 8], contracted: 2, produced: 3, outputAxis: 3 });
    const conv1d = node({ kind: 'conv', rank: 1, filters: 32, kernelSize: [5], strides: [1], dilation: [1], padding: 'causal', useBias: true, activation: 'relu' }, [100, 32]);
    expect(weightLayout(conv1d, [100, 16])).toEqual({ shape: [5, 16, 32], contracted: 1, produced: 2, outputAxis: 2 });
    expect(naturalOutput('S(2)', weightLayout(conv1d, [100, 16]))).toBe('S(2)');
  });

  it('has no layout for layers without a sharding rule', () => {
    expect(weightLayout(node({ kind: 'flatten' }, [784]), [28, 28])).toBeUndefined();
    expect(naturalOutput('S(1)', undefined)).toBe('B');
  });
});
