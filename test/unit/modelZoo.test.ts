import { describe, expect, it } from 'vitest';
import { totalParams, totalWeights, type ModelGraph } from '../../engine/model/graph.js';
import { zooModel, zooModelNames } from '../../engine/model/zoo.js';

/**
 * The realistic zoo against published parameter counts. `totalParams` counts trainable parameters, as
 * torchvision and Hugging Face report them; batch-norm moving statistics are non-trainable.
 */
const layer = (graph: ModelGraph, id: string) => graph.layers.find((l) => l.id === id)!;

describe('realistic zoo models', () => {
  it.each([
    // torchvision: convolutions without bias, BN weight and bias.
    ['resnet18', 11_689_512],
    ['resnet50', 25_557_032],
    ['vgg16', 138_357_544],
    // Hugging Face BertModel: embeddings, encoder and pooler; no pre-training heads.
    ['bert-base', 109_482_240],
    ['bert-large', 335_141_888],
    // Hugging Face GPT2LMHeadModel: the LM head is tied to the token embedding.
    ['gpt2-small', 124_439_808],
    ['gpt2-medium', 354_823_168],
    ['gpt2-xl', 1_557_611_200],
  ])('%s has %i parameters', (name, published) => {
    expect(totalParams(zooModel(name))).toBe(published);
  });

  it('ResNet-50 batch norms hold 53,120 moving statistics, as in Keras', () => {
    const resnet = zooModel('resnet50');
    expect(totalWeights(resnet) - totalParams(resnet)).toBe(53_120);
  });

  it('resnet50-100k: the 2048 × 100,000 classifier dominates (Whale’s case)', () => {
    const graph = zooModel('resnet50-100k');
    const head = layer(graph, 'predictions');
    expect(head.params).toBe(2048 * 100_000 + 100_000);
    expect(totalParams(graph)).toBe(25_557_032 - (2048 * 1000 + 1000) + head.params);
    expect(head.params / totalParams(graph)).toBeGreaterThan(0.89);
  });

  it('shapes and FLOPs flow through residual blocks and attention', () => {
    const resnet = zooModel('resnet50');
    expect(layer(resnet, 'stem_pool').outputShape).toEqual([56, 56, 64]);
    expect(layer(resnet, 'conv5_block3_out').outputShape).toEqual([7, 7, 2048]);
    expect(layer(resnet, 'conv3_block1_add').inputs).toEqual(['conv3_block1_conv3_bn', 'conv3_block1_shortcut_bn']);
    // ResNet-50's well-known ~4.1 G multiply-adds per 224×224 image.
    const gmacs = resnet.layers.reduce((s, l) => s + l.forwardFlops, 0) / 2e9;
    expect(gmacs).toBeGreaterThan(4.0);
    expect(gmacs).toBeLessThan(4.2);
    const bert = zooModel('bert-base');
    const attention = layer(bert, 'layer_0_attention');
    expect(attention.outputShape).toEqual([512, 768]);
    expect(attention.params).toBe(4 * (768 * 768 + 768));
    expect(bert.outputs).toEqual(['layer_11_ff_norm', 'pooler']);
    const gpt2 = zooModel('gpt2-small');
    expect(layer(gpt2, 'lm_head').params).toBe(0);
    expect(layer(gpt2, 'lm_head').forwardFlops).toBe(2 * 1024 * 768 * 50_257);
  });

  it('every layer belongs to a group the studio can collapse', () => {
    for (const name of zooModelNames()) {
      const graph = zooModel(name);
      const grouped = graph.layers.filter((l) => l.spec.kind !== 'input' && l.group === undefined && !['mlp', 'mlp-wide', 'cnn'].includes(name));
      expect(grouped.map((l) => l.id), name).toEqual([]);
      expect(new Set(graph.layers.map((l) => l.id)).size, name).toBe(graph.layers.length);
    }
    expect(new Set(zooModel('gpt2-xl').layers.map((l) => l.group)).size).toBeGreaterThan(48);
  });
});
