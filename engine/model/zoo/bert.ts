import { GraphBuilder } from '../builder.js';
import type { ModelGraph } from '../graph.js';
import { postNormBlock, type TransformerSize } from './transformer.js';

const VOCAB = 30_522;
const MAX_POSITIONS = 512;

/**
 * BERT's encoder as Hugging Face's BertModel: token, segment and position embeddings, the encoder
 * stack and the pooler (a tanh dense layer on the first token). Pre-training heads are not included.
 * Sequences are the full 512 tokens.
 */
function bert(name: string, description: string, size: TransformerSize): ModelGraph {
  const b = new GraphBuilder(name);
  const tokens = b.add('token_ids', { kind: 'input', shape: [MAX_POSITIONS] });
  const segments = b.add('segment_ids', { kind: 'input', shape: [MAX_POSITIONS] });
  const g = 'embeddings';
  const words = b.add('word_embeddings', { kind: 'embedding', inputDim: VOCAB, outputDim: size.width }, [tokens], g);
  const types = b.add('segment_embeddings', { kind: 'embedding', inputDim: 2, outputDim: size.width }, [segments], g);
  const summed = b.add('embeddings_add', { kind: 'merge', op: 'add' }, [words, types], g);
  const positioned = b.add('position_embeddings', { kind: 'positionEmbedding', maxLength: MAX_POSITIONS }, [summed], g);
  const normed = b.add('embeddings_norm', { kind: 'layerNorm', axes: [-1], center: true, scale: true }, [positioned], g);
  let x = b.add('embeddings_dropout', { kind: 'dropout', rate: 0.1 }, [normed], g);
  for (let i = 0; i < size.layers; i++) x = postNormBlock(b, `layer_${i}`, x, size);
  const first = b.add('pooler_first_token', { kind: 'cropping1d', cropping: [0, MAX_POSITIONS - 1] }, [x], 'pooler');
  const flat = b.add('pooler_flatten', { kind: 'flatten' }, [first], 'pooler');
  const pooled = b.add('pooler', { kind: 'denseNd', units: size.width, useBias: true, activation: 'tanh' }, [flat], 'pooler');
  return b.build(description, [x, pooled]);
}

export const bertBase = (): ModelGraph =>
  bert('bert-base', 'BERT-base encoder (12 layers, 768 wide, 12 heads), 512-token sequences, with pooler', {
    layers: 12,
    width: 768,
    heads: 12,
    ffWidth: 3072,
  });

export const bertLarge = (): ModelGraph =>
  bert('bert-large', 'BERT-large encoder (24 layers, 1024 wide, 16 heads), 512-token sequences, with pooler', {
    layers: 24,
    width: 1024,
    heads: 16,
    ffWidth: 4096,
  });
