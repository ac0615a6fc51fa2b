import { z } from 'zod';
import type { ModelGraph } from './graph.js';
import { totalParams } from './graph.js';
import { bertBase, bertLarge } from './zoo/bert.js';
import { gpt2Medium, gpt2Small, gpt2Xl } from './zoo/gpt2.js';
import { cnn, mlp, mlpWide } from './zoo/mnist.js';
import { resnet18, resnet50, resnet50x100k } from './zoo/resnet.js';
import { vgg16 } from './zoo/vgg.js';

/**
 * The built-in model zoo: architectures only (weights are initialised from the plan's seed). `mlp` and
 * `cnn` train on the bundled MNIST; the others have realistic sizes for planning and pricing.
 */
const builders: Record<string, () => ModelGraph> = {
  mlp,
  'mlp-wide': mlpWide,
  cnn,
  resnet18,
  resnet50,
  'resnet50-100k': resnet50x100k,
  vgg16,
  'bert-base': bertBase,
  'bert-large': bertLarge,
  'gpt2-small': gpt2Small,
  'gpt2-medium': gpt2Medium,
  'gpt2-xl': gpt2Xl,
};

export const ZooEntrySchema = z.object({ name: z.string(), description: z.string(), layers: z.number(), params: z.number() });
export type ZooEntry = z.infer<typeof ZooEntrySchema>;

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
