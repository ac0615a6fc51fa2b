import { describe, expect, it } from 'vitest';
import { totalParams } from '../../engine/model/graph.js';
import { sequentialGraph } from '../../engine/model/sequential.js';
import { zooEntries, zooModel } from '../../engine/model/zoo.js';

describe('model zoo', () => {
  it('mlp: 784-512-256-10 with hand-counted parameters and FLOPs', () => {
    const mlp = zooModel('mlp');
    expect(totalParams(mlp)).toBe(784 * 512 + 512 + 512 * 256 + 256 + 256 * 10 + 10);
    const dense1 = mlp.layers.find((l) => l.id === 'dense_1')!;
    expect(dense1.forwardFlops).toBe(2 * 784 * 512);
    expect(dense1.backwardFlops).toBe(2 * dense1.forwardFlops);
    expect(dense1.activationBytes).toBe(512 * 4);
  });

  it('cnn: shapes flow through conv, pooling and flatten', () => {
    const cnn = zooModel('cnn');
    const shape = (id: string) => cnn.layers.find((l) => l.id === id)!.outputShape;
    expect(shape('conv_1')).toEqual([28, 28, 8]);
    expect(shape('pool_1')).toEqual([14, 14, 8]);
    expect(shape('pool_2')).toEqual([7, 7, 16]);
    expect(shape('flatten')).toEqual([784]);
    expect(totalParams(cnn)).toBe(3 * 3 * 8 + 8 + 3 * 3 * 8 * 16 + 16 + 784 * 64 + 64 + 64 * 10 + 10);
  });

  it('mlp-wide: a 10,000-class classifier holding almost all of the parameters', () => {
    const wide = zooModel('mlp-wide');
    expect(wide.numClasses).toBe(10_000);
    expect(totalParams(wide)).toBe(784 * 512 + 512 + 512 * 10_000 + 10_000);
  });

  it('lists entries and rejects unknown names helpfully', () => {
    expect(zooEntries().map((e) => e.name)).toEqual([
      'mlp',
      'mlp-wide',
      'cnn',
      'resnet18',
      'resnet50',
      'resnet50-100k',
      'vgg16',
      'bert-base',
      'bert-large',
      'gpt2-small',
      'gpt2-medium',
      'gpt2-xl',
    ]);
    expect(() => zooModel('nope')).toThrow(/Available models: mlp, mlp-wide, cnn, resnet18/);
  });

  it('a malformed architecture says which layer is wrong', () => {
    expect(() => sequentialGraph('bad', '', [28, 28, 1], [{ id: 'fc', spec: { kind: 'dense', units: 10, activation: 'linear' } }], 10)).toThrow(
      /layer "fc": A dense layer needs a flat input/,
    );
  });
});
