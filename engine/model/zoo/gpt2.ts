import { GraphBuilder } from '../builder.js';
import type { ModelGraph } from '../graph.js';
import { preNormBlock, type TransformerSize } from './transformer.js';

const VOCAB = 50_257;
const CONTEXT = 1_024;

/**
 * GPT-2 as Hugging Face's GPT2LMHeadModel: token and position embeddings, the decoder stack, a final
 * layer norm, and the language-model head, whose weights are the token embedding's (tied), so the head
 * adds FLOPs but no parameters. Sequences fill the 1,024-token context.
 */
function gpt2(name: string, description: string, size: TransformerSize): ModelGraph {
  const b = new GraphBuilder(name);
  const tokens = b.add('token_ids', { kind: 'input', shape: [CONTEXT] });
  const words = b.add('wte', { kind: 'embedding', inputDim: VOCAB, outputDim: size.width }, [tokens], 'embeddings');
  const positioned = b.add('wpe', { kind: 'positionEmbedding', maxLength: CONTEXT }, [words], 'embeddings');
  let x = b.add('embeddings_dropout', { kind: 'dropout', rate: 0.1 }, [positioned], 'embeddings');
  for (let i = 0; i < size.layers; i++) x = preNormBlock(b, `block_${i}`, x, size);
  x = b.add('ln_f', { kind: 'layerNorm', axes: [-1], center: true, scale: true }, [x], 'head');
  const logits = b.add('lm_head', { kind: 'denseNd', units: VOCAB, useBias: false, activation: 'linear', tiedTo: 'wte' }, [x], 'head');
  return b.build(description, [logits]);
}

const sized = (layers: number, width: number, heads: number): TransformerSize => ({ layers, width, heads, ffWidth: 4 * width });

export const gpt2Small = (): ModelGraph => gpt2('gpt2-small', 'GPT-2 small (12 layers, 768 wide), 1,024-token context, tied head', sized(12, 768, 12));

export const gpt2Medium = (): ModelGraph => gpt2('gpt2-medium', 'GPT-2 medium (24 layers, 1024 wide), 1,024-token context, tied head', sized(24, 1024, 16));

export const gpt2Xl = (): ModelGraph => gpt2('gpt2-xl', 'GPT-2 XL (48 layers, 1600 wide), 1,024-token context, tied head', sized(48, 1600, 25));
