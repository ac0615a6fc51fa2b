/**
 * What a layer is, independent of where it sits in a graph. The first six variants are the ones the
 * agents execute (their fields are the agents' contract and do not change); the importer emits them
 * whenever a Keras layer fits them exactly, and the general variants below otherwise. Shapes exclude
 * the batch dimension throughout.
 */

import type { BuiltWeight } from './import/layerLibrary.js';

/** Activations the agents implement. General layers carry Keras's activation name as a string. */
export type Activation = 'linear' | 'relu' | 'softmax';

export type Padding = 'same' | 'valid';

/** Recurrent layers; GRU's `resetAfter` changes its bias count (Keras 2 defaults it on, tfjs off). */
export interface RecurrentSpec {
  kind: 'recurrent';
  cell: 'lstm' | 'gru' | 'simpleRnn';
  units: number;
  returnSequences: boolean;
  useBias: boolean;
  resetAfter: boolean;
}

export type ExecutableLayerSpec =
  | { kind: 'input'; shape: number[] }
  /** A dense layer on a flat input. */
  | { kind: 'dense'; units: number; activation: Activation }
  | {
      kind: 'conv2d';
      filters: number;
      kernelSize: [number, number];
      strides: [number, number];
      padding: Padding;
      activation: Activation;
    }
  /** Max pooling with 'valid' padding. */
  | { kind: 'maxPool2d'; poolSize: [number, number]; strides: [number, number] }
  | { kind: 'flatten' }
  | { kind: 'reshape'; targetShape: number[] };

export type GeneralLayerSpec =
  /** Keras Dense on any rank: applies to the last axis. `tiedTo` names the layer owning the kernel. */
  | { kind: 'denseNd'; units: number; useBias: boolean; activation: string; tiedTo?: string }
  /** Convolution over 1 or 2 spatial axes, channels last. */
  | {
      kind: 'conv';
      rank: 1 | 2;
      filters: number;
      kernelSize: number[];
      strides: number[];
      dilation: number[];
      padding: Padding | 'causal';
      useBias: boolean;
      activation: string;
    }
  | {
      kind: 'depthwiseConv2d';
      kernelSize: [number, number];
      strides: [number, number];
      dilation: [number, number];
      padding: Padding;
      depthMultiplier: number;
      useBias: boolean;
      activation: string;
    }
  | {
      kind: 'separableConv2d';
      filters: number;
      kernelSize: [number, number];
      strides: [number, number];
      dilation: [number, number];
      padding: Padding;
      depthMultiplier: number;
      useBias: boolean;
      activation: string;
    }
  | {
      kind: 'conv2dTranspose';
      filters: number;
      kernelSize: [number, number];
      strides: [number, number];
      padding: Padding;
      useBias: boolean;
      activation: string;
    }
  | { kind: 'pool'; op: 'max' | 'avg'; rank: 1 | 2; poolSize: number[]; strides: number[]; padding: Padding }
  | { kind: 'globalPool'; op: 'max' | 'avg'; rank: 1 | 2 }
  /**
   * Moving mean and variance are non-trainable parameters. `axis` indexes the shape without the batch
   * dimension (negative counts from the end).
   */
  | { kind: 'batchNorm'; axis: number; center: boolean; scale: boolean }
  /** `axes` index the shape without the batch dimension. */
  | { kind: 'layerNorm'; axes: number[]; center: boolean; scale: boolean }
  | { kind: 'dropout'; rate: number }
  /** `dims` is Keras's 1-based permutation of the non-batch axes. */
  | { kind: 'permute'; dims: number[] }
  | { kind: 'activation'; activation: string }
  | { kind: 'embedding'; inputDim: number; outputDim: number }
  /** Learned absolute positions added to a [sequence, features] input (BERT, GPT-2). */
  | { kind: 'positionEmbedding'; maxLength: number }
  | RecurrentSpec
  | { kind: 'bidirectional'; layer: RecurrentSpec; mergeMode: 'concat' | 'sum' | 'mul' | 'ave' }
  | { kind: 'timeDistributed'; layer: LayerSpec }
  | { kind: 'merge'; op: 'add' | 'subtract' | 'multiply' | 'average' | 'maximum' | 'minimum' }
  /** `axis` indexes the shape without the batch dimension. */
  | { kind: 'concatenate'; axis: number }
  | { kind: 'zeroPadding2d'; padding: [[number, number], [number, number]] }
  | { kind: 'cropping1d'; cropping: [number, number] }
  | { kind: 'cropping2d'; cropping: [[number, number], [number, number]] }
  | { kind: 'upSampling2d'; size: [number, number] }
  /** Inputs: query, value and optionally key. `causal` masks future positions (GPT-2). */
  | {
      kind: 'multiHeadAttention';
      numHeads: number;
      keyDim: number;
      valueDim: number;
      outputDim?: number;
      useBias: boolean;
      causal: boolean;
    }
  /**
   * A layer of any class tfjs-layers knows (the user's registered classes included) that Shoal has no
   * spec of its own for: its output shape and weights are what tfjs-layers built (import/layerLibrary.ts).
   */
  | { kind: 'tfjsLayer'; className: string; config: unknown; outputShape: number[]; weights: BuiltWeight[] }
  /** A layer Shoal does not model: its shape passes through when it cannot be inferred; no parameters. */
  | { kind: 'opaque'; className: string; config: unknown };

export type LayerSpec = ExecutableLayerSpec | GeneralLayerSpec;

export type LayerKind = LayerSpec['kind'];
