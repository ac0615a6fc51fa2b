import type { ModelGraph } from '../graph.js';
import { sequentialGraph } from '../sequential.js';

/**
 * The models the agents train: both take 28×28 greyscale digits and predict 10 classes, so they train
 * on the bundled MNIST. Their ids and specs are the agents' and the tests' reference: keep them stable.
 */
export function mlp(): ModelGraph {
  return sequentialGraph(
    'mlp',
    'Multi-layer perceptron 784-512-256-10 with ReLU',
    [784],
    [
      { id: 'dense_1', spec: { kind: 'dense', units: 512, activation: 'relu' }, group: 'hidden' },
      { id: 'dense_2', spec: { kind: 'dense', units: 256, activation: 'relu' }, group: 'hidden' },
      { id: 'logits', spec: { kind: 'dense', units: 10, activation: 'linear' }, group: 'head' },
    ],
    10,
  );
}

/**
 * Whale's wide-classifier case at a size that trains here: the digits classified among 10,000
 * classes (only the first 10 ever occur). The classifier holds 95% of the parameters — the layer
 * class-dimension sharding exists for, with logits that are never gathered.
 */
export function mlpWide(): ModelGraph {
  return sequentialGraph(
    'mlp-wide',
    'Multi-layer perceptron 784-512 with a 10,000-class classifier (for class-dimension sharding)',
    [784],
    [
      { id: 'dense_1', spec: { kind: 'dense', units: 512, activation: 'relu' }, group: 'hidden' },
      { id: 'logits', spec: { kind: 'dense', units: 10_000, activation: 'linear' }, group: 'head' },
    ],
    10_000,
  );
}

export function cnn(): ModelGraph {
  return sequentialGraph(
    'cnn',
    'Small convolutional network: two 3×3 conv + max-pool blocks, then a dense classifier',
    [784],
    [
      { id: 'to_image', spec: { kind: 'reshape', targetShape: [28, 28, 1] } },
      {
        id: 'conv_1',
        spec: { kind: 'conv2d', filters: 8, kernelSize: [3, 3], strides: [1, 1], padding: 'same', activation: 'relu' },
        group: 'block_1',
      },
      { id: 'pool_1', spec: { kind: 'maxPool2d', poolSize: [2, 2], strides: [2, 2] }, group: 'block_1' },
      {
        id: 'conv_2',
        spec: { kind: 'conv2d', filters: 16, kernelSize: [3, 3], strides: [1, 1], padding: 'same', activation: 'relu' },
        group: 'block_2',
      },
      { id: 'pool_2', spec: { kind: 'maxPool2d', poolSize: [2, 2], strides: [2, 2] }, group: 'block_2' },
      { id: 'flatten', spec: { kind: 'flatten' }, group: 'head' },
      { id: 'dense_1', spec: { kind: 'dense', units: 64, activation: 'relu' }, group: 'head' },
      { id: 'logits', spec: { kind: 'dense', units: 10, activation: 'linear' }, group: 'head' },
    ],
    10,
  );
}
