import { GraphBuilder } from '../builder.js';
import type { ModelGraph } from '../graph.js';

/** Convolution widths of VGG-16's five blocks (configuration D of Simonyan & Zisserman). */
const BLOCKS = [
  [64, 64],
  [128, 128],
  [256, 256, 256],
  [512, 512, 512],
  [512, 512, 512],
];

/** VGG-16 on 224×224 RGB, 1,000 classes, as torchvision builds it (dropout in the classifier). */
export function vgg16(): ModelGraph {
  const b = new GraphBuilder('vgg16');
  let x = b.add('input', { kind: 'input', shape: [224, 224, 3] });
  BLOCKS.forEach((widths, i) => {
    const group = `block_${i + 1}`;
    widths.forEach((filters, j) => {
      x = b.add(`${group}_conv${j + 1}`, { kind: 'conv2d', filters, kernelSize: [3, 3], strides: [1, 1], padding: 'same', activation: 'relu' }, [x], group);
    });
    x = b.add(`${group}_pool`, { kind: 'maxPool2d', poolSize: [2, 2], strides: [2, 2] }, [x], group);
  });
  x = b.add('flatten', { kind: 'flatten' }, [x], 'classifier');
  x = b.add('fc1', { kind: 'dense', units: 4096, activation: 'relu' }, [x], 'classifier');
  x = b.add('fc1_dropout', { kind: 'dropout', rate: 0.5 }, [x], 'classifier');
  x = b.add('fc2', { kind: 'dense', units: 4096, activation: 'relu' }, [x], 'classifier');
  x = b.add('fc2_dropout', { kind: 'dropout', rate: 0.5 }, [x], 'classifier');
  x = b.add('predictions', { kind: 'dense', units: 1000, activation: 'linear' }, [x], 'classifier');
  return b.build('VGG-16, 224×224 RGB input, 1,000 classes', [x]);
}
