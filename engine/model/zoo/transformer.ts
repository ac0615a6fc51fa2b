import type { GraphBuilder } from '../builder.js';

/** Sizes of a transformer stack; the per-head width is `width / heads`. */
export interface TransformerSize {
  layers: number;
  width: number;
  heads: number;
  /** Width of the feed-forward hidden layer (4 × width in BERT and GPT-2). */
  ffWidth: number;
}

const norm = (b: GraphBuilder, id: string, x: string, group: string) =>
  b.add(id, { kind: 'layerNorm', axes: [-1], center: true, scale: true }, [x], group);

/** Self-attention: query, value and key are all `x`. */
function selfAttention(b: GraphBuilder, group: string, x: string, size: TransformerSize, causal: boolean): string {
  const headWidth = size.width / size.heads;
  const spec = { kind: 'multiHeadAttention', numHeads: size.heads, keyDim: headWidth, valueDim: headWidth, useBias: true, causal } as const;
  return b.add(`${group}_attention`, spec, [x, x], group);
}

function feedForward(b: GraphBuilder, group: string, x: string, size: TransformerSize): string {
  const hidden = b.add(`${group}_ff1`, { kind: 'denseNd', units: size.ffWidth, useBias: true, activation: 'gelu' }, [x], group);
  return b.add(`${group}_ff2`, { kind: 'denseNd', units: size.width, useBias: true, activation: 'linear' }, [hidden], group);
}

/** BERT's block: normalise after each residual add (post-LN). Returns the block's output id. */
export function postNormBlock(b: GraphBuilder, group: string, x: string, size: TransformerSize): string {
  const attention = b.add(`${group}_attention_dropout`, { kind: 'dropout', rate: 0.1 }, [selfAttention(b, group, x, size, false)], group);
  const mid = norm(b, `${group}_attention_norm`, b.add(`${group}_attention_add`, { kind: 'merge', op: 'add' }, [x, attention], group), group);
  const ff = b.add(`${group}_ff_dropout`, { kind: 'dropout', rate: 0.1 }, [feedForward(b, group, mid, size)], group);
  return norm(b, `${group}_ff_norm`, b.add(`${group}_ff_add`, { kind: 'merge', op: 'add' }, [mid, ff], group), group);
}

/** GPT-2's block: normalise before attention and feed-forward (pre-LN), causal attention. */
export function preNormBlock(b: GraphBuilder, group: string, x: string, size: TransformerSize): string {
  const attention = selfAttention(b, group, norm(b, `${group}_attention_norm`, x, group), size, true);
  const mid = b.add(`${group}_attention_add`, { kind: 'merge', op: 'add' }, [x, attention], group);
  const ff = feedForward(b, group, norm(b, `${group}_ff_norm`, mid, group), size);
  return b.add(`${group}_ff_add`, { kind: 'merge', op: 'add' }, [mid, ff], group);
}
