import { GraphBuilder } from '../builder.js';
import type { LayerSpec, ModelGraph } from '../graph.js';

/**
 * ResNets as torchvision builds them (v1.5: the stride sits in the 3×3 convolution): convolutions
 * without bias, each followed by batch normalisation; a projection shortcut where the shape changes.
 * Every residual block is a group, so the studio can collapse it.
 */
interface Net {
  b: GraphBuilder;
  x: string;
  channels: number;
}

function conv(net: Net, id: string, input: string, filters: number, kernel: number, stride: number, group: string): string {
  const spec: LayerSpec = {
    kind: 'conv',
    rank: 2,
    filters,
    kernelSize: [kernel, kernel],
    strides: [stride, stride],
    dilation: [1, 1],
    padding: 'same',
    useBias: false,
    activation: 'linear',
  };
  const c = net.b.add(id, spec, [input], group);
  return net.b.add(`${id}_bn`, { kind: 'batchNorm', axis: -1, center: true, scale: true }, [c], group);
}

const relu = (net: Net, id: string, input: string, group: string) => net.b.add(id, { kind: 'activation', activation: 'relu' }, [input], group);

/** Two 3×3 convolutions (ResNet-18/34). */
function basicBlock(net: Net, group: string, width: number, stride: number): void {
  let y = relu(net, `${group}_relu1`, conv(net, `${group}_conv1`, net.x, width, 3, stride, group), group);
  y = conv(net, `${group}_conv2`, y, width, 3, 1, group);
  finishBlock(net, group, y, width, stride);
}

/** 1×1 reduce, 3×3, 1×1 expand by four (ResNet-50 and deeper). */
function bottleneck(net: Net, group: string, width: number, stride: number): void {
  let y = relu(net, `${group}_relu1`, conv(net, `${group}_conv1`, net.x, width, 1, 1, group), group);
  y = relu(net, `${group}_relu2`, conv(net, `${group}_conv2`, y, width, 3, stride, group), group);
  y = conv(net, `${group}_conv3`, y, 4 * width, 1, 1, group);
  finishBlock(net, group, y, 4 * width, stride);
}

function finishBlock(net: Net, group: string, y: string, outChannels: number, stride: number): void {
  const projected = stride !== 1 || net.channels !== outChannels;
  const shortcut = projected ? conv(net, `${group}_shortcut`, net.x, outChannels, 1, stride, group) : net.x;
  const sum = net.b.add(`${group}_add`, { kind: 'merge', op: 'add' }, [y, shortcut], group);
  net.x = relu(net, `${group}_out`, sum, group);
  net.channels = outChannels;
}

function resnet(name: string, description: string, depths: number[], block: typeof basicBlock, classes: number): ModelGraph {
  const b = new GraphBuilder(name);
  const input = b.add('input', { kind: 'input', shape: [224, 224, 3] });
  const net: Net = { b, x: input, channels: 3 };
  net.x = relu(net, 'stem_relu', conv(net, 'stem_conv', input, 64, 7, 2, 'stem'), 'stem');
  net.x = b.add('stem_pool', { kind: 'pool', op: 'max', rank: 2, poolSize: [3, 3], strides: [2, 2], padding: 'same' }, [net.x], 'stem');
  net.channels = 64;
  depths.forEach((depth, stage) => {
    for (let i = 0; i < depth; i++) {
      block(net, `conv${stage + 2}_block${i + 1}`, 64 * 2 ** stage, i === 0 && stage > 0 ? 2 : 1);
    }
  });
  const pooled = b.add('avg_pool', { kind: 'globalPool', op: 'avg', rank: 2 }, [net.x], 'head');
  const logits = b.add('predictions', { kind: 'dense', units: classes, activation: 'linear' }, [pooled], 'head');
  return b.build(description, [logits]);
}

export const resnet18 = (): ModelGraph => resnet('resnet18', 'ResNet-18, 224×224 RGB input, 1,000 classes', [2, 2, 2, 2], basicBlock, 1000);

export const resnet50 = (): ModelGraph => resnet('resnet50', 'ResNet-50, 224×224 RGB input, 1,000 classes', [3, 4, 6, 3], bottleneck, 1000);

/** Whale's case: the classifier (2048 × 100,000) holds most of the parameters and dominates all-reduce. */
export const resnet50x100k = (): ModelGraph =>
  resnet('resnet50-100k', 'ResNet-50 with a 100,000-class output (Whale’s large-classification case)', [3, 4, 6, 3], bottleneck, 100_000);
