// Small users' models that set layer options Shoal must not silently drop: weight regularizers and
// masks. Built with tfjs-layers (the ES module build, as the agents load it).
import { tfl } from './userModels.js';

const { regularizers } = tfl;

/** An MLP with an L2 kernel, an L1 bias and an L1L2 kernel regularizer (a 2-stage cut falls between the Dense layers). */
export function regularizedMlp(): tfl.LayersModel {
  const input = tfl.input({ shape: [6], name: 'features' });
  const hidden = tfl.layers.dense({ units: 8, activation: 'relu', kernelRegularizer: regularizers.l2({ l2: 0.05 }), biasRegularizer: regularizers.l1({ l1: 0.05 }), name: 'reg_hidden' }).apply(input) as tfl.SymbolicTensor;
  const out = tfl.layers.dense({ units: 3, activation: 'softmax', kernelRegularizer: regularizers.l1l2({ l1: 0.02, l2: 0.05 }), name: 'reg_probs' }).apply(hidden) as tfl.SymbolicTensor;
  return tfl.model({ inputs: input, outputs: out, name: 'regularized_mlp' });
}

/**
 * What tfjs 4.22's model.fit counts differently from Keras: a regularized Dense layer shared by two
 * calls (Keras: once; tfjs: once per call) and an LSTM whose cell carries kernel, recurrent and bias
 * regularizers (Keras: counted; tfjs: dropped, its RNN layer does not pass its cell's losses on).
 */
export function regularizedSharedAndRecurrent(): tfl.LayersModel {
  const input = tfl.input({ shape: [4, 3], name: 'steps' });
  const lstm = tfl.layers.lstm({ units: 4, kernelRegularizer: regularizers.l2({ l2: 0.05 }), recurrentRegularizer: regularizers.l1({ l1: 0.02 }), biasRegularizer: regularizers.l2({ l2: 0.05 }), name: 'reg_lstm' }).apply(input) as tfl.SymbolicTensor;
  const shared = tfl.layers.dense({ units: 4, activation: 'tanh', kernelRegularizer: regularizers.l2({ l2: 0.05 }), name: 'reg_shared' });
  const twice = shared.apply(shared.apply(lstm)) as tfl.SymbolicTensor;
  const out = tfl.layers.dense({ units: 2, activation: 'softmax', name: 'reg_out' }).apply(twice) as tfl.SymbolicTensor;
  return tfl.model({ inputs: input, outputs: out, name: 'regularized_shared' });
}

/**
 * Token ids with zero padding → Embedding(mask_zero) → GRU over the sequence → Concatenate with the
 * embeddings (the mask goes through the merge) → GRU → softmax. A 2-stage cut after the first GRU
 * carries two masked tensors.
 */
export function maskedRecurrent(maskZero = true): tfl.LayersModel {
  const tokens = tfl.input({ shape: [6], name: 'tokens' });
  const embed = tfl.layers.embedding({ inputDim: 10, outputDim: 4, maskZero, name: 'm_embed' }).apply(tokens) as tfl.SymbolicTensor;
  const gruA = tfl.layers.gru({ units: 4, returnSequences: true, name: 'm_gru_a' }).apply(embed) as tfl.SymbolicTensor;
  const cat = tfl.layers.concatenate({ name: 'm_cat' }).apply([gruA, embed]) as tfl.SymbolicTensor;
  const gruB = tfl.layers.gru({ units: 3, name: 'm_gru_b' }).apply(cat) as tfl.SymbolicTensor;
  const out = tfl.layers.dense({ units: 2, activation: 'softmax', name: 'm_out' }).apply(gruB) as tfl.SymbolicTensor;
  return tfl.model({ inputs: tokens, outputs: out, name: 'masked_recurrent' });
}

/** Padded token ids: sample i has 1 + (i mod length) tokens in 1..9, then zeros (what mask_zero masks). */
export function paddedTokens(samples: number, length: number, seed = 3): Int32Array {
  let state = seed >>> 0;
  const next = () => ((state = (Math.imul(state, 1664525) + 1013904223) >>> 0) / 4294967296);
  return Int32Array.from({ length: samples * length }, (_, k) => (k % length <= Math.floor(k / length) % length ? 1 + Math.floor(next() * 9) : 0));
}
