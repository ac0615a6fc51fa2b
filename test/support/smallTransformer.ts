import { MultiHeadAttention } from '../../agents/exec/graph/multiHeadAttention.js';
import { tfl } from './userModels.js';

export const SEQUENCE = 6;
export const VOCABULARY = 16;
export const CLASSES = 4;
/** Token ids and class labels for writeNpyData. */
export const SMALL_TRANSFORMER_ARRAYS = { x: { shape: [SEQUENCE], kind: { classes: VOCABULARY } }, y: { shape: [], kind: { classes: CLASSES } } };

/** Embedding → 2 × (attention + residual + LayerNorm, MLP + residual + LayerNorm) → pooling → logits. */
export function smallTransformer(): tfl.LayersModel {
  const L = tfl.layers;
  const ids = tfl.input({ shape: [SEQUENCE], name: 'tokens' });
  let x = L.embedding({ inputDim: VOCABULARY, outputDim: 8, name: 'embed' }).apply(ids) as tfl.SymbolicTensor;
  for (const b of [1, 2]) {
    const attention = new MultiHeadAttention({ numHeads: 4, keyDim: 2, name: `attention_${b}` }).apply(x, { value: x }) as tfl.SymbolicTensor;
    x = L.layerNormalization({ name: `norm_${b}a` }).apply(L.add({ name: `residual_${b}a` }).apply([x, attention])) as tfl.SymbolicTensor;
    const hidden = L.dense({ units: 16, activation: 'relu', name: `mlp_${b}_up` }).apply(x) as tfl.SymbolicTensor;
    const down = L.dense({ units: 8, name: `mlp_${b}_down` }).apply(hidden) as tfl.SymbolicTensor;
    x = L.layerNormalization({ name: `norm_${b}b` }).apply(L.add({ name: `residual_${b}b` }).apply([x, down])) as tfl.SymbolicTensor;
  }
  const pooled = L.globalAveragePooling1d({ name: 'pool' }).apply(x) as tfl.SymbolicTensor;
  const logits = L.dense({ units: CLASSES, name: 'classifier' }).apply(pooled) as tfl.SymbolicTensor;
  return tfl.model({ inputs: ids, outputs: logits, name: 'small_transformer' });
}

