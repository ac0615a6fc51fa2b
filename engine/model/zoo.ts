import type { ModelGraph } from './graph.js';
import { totalParams } from './graph.js';
import { sequentialGraph } from './sequential.js';

/**
 * The built-in model zoo: architectures only (weights are initialised from the plan's seed).
 * Both models take 28×28 greyscale digits and predict 10 classes, so they train on the bundled MNIST.
 */
const builders: Record<string, () => ModelGraph> = {
  mlp: () =>
    sequentialGraph(
      'mlp',
      'Multi-layer perceptron 784-512-256-10 with ReLU',
      [784],
      [
        { id: 'dense_1', spec: { kind: 'dense', units: 512, activation: 'relu' }, group: 'hidden' },
        { id: 'dense_2', spec: { kind: 'dense', units: 256, activation: 'relu' }, group: 'hidden' },
        { id: 'logits', spec: { kind: 'dense', units: 10, activation: 'linear' }, group: 'head' },
      ],
      10,
    ),
  cnn: () =>
    sequentialGraph(
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
    ),
};

export interface ZooEntry {
  name: string;
  description: string;
  layers: number;
  params: number;
}

export function zooModelNames(): string[] {
  return Object.keys(builders);
}

export function zooModel(name: string): ModelGraph {
  const build = builders[name];
  if (!build) {
    throw new Error(`Unknown model "${name}". Available models: ${zooModelNames().join(', ')}.`);
  }
  return build();
}

export function zooEntries(): ZooEntry[] {
  return zooModelNames().map((name) => {
    const graph = zooModel(name);
    return { name, description: graph.description, layers: graph.layers.length, params: totalParams(graph) };
  });
}
