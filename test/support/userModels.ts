// Users' own models for tests and benchmarks: built with tfjs-layers, saved as tfjs's model.save()
// does (model.json + weights .bin), with NumPy data files beside them.
import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-backend-cpu';
import '@tensorflow/tfjs-core/dist/public/chained_ops/register_all_chained_ops';
import '@tensorflow/tfjs-core/dist/register_all_gradients';
// The ES module build, as the agents load it (see agents/exec/graph/layersModel.ts).
import * as tfl from '@tensorflow/tfjs-layers/dist/index.js';
import { MultiHeadAttention } from '../../agents/exec/graph/multiHeadAttention.js';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeNpy } from '../../engine/wire/data/npy.js';

export { tf, tfl };

/** Save as tfjs-node's file:// saver would: model.json and one weights file. */
export async function saveLayersModel(model: tfl.LayersModel, dir: string): Promise<string> {
  mkdirSync(dir, { recursive: true });
  await model.save(
    tf.io.withSaveHandler(async (artifacts) => {
      writeFileSync(join(dir, 'weights.bin'), Buffer.from(tf.io.CompositeArrayBuffer.join(artifacts.weightData!)));
      const json = { modelTopology: artifacts.modelTopology, format: artifacts.format, generatedBy: artifacts.generatedBy, convertedBy: null, weightsManifest: [{ paths: ['weights.bin'], weights: artifacts.weightSpecs }] };
      writeFileSync(join(dir, 'model.json'), JSON.stringify(json));
      return { modelArtifactsInfo: { dateSaved: new Date(), modelTopologyType: 'JSON' } };
    }),
  );
  return join(dir, 'model.json');
}

/** tfjs-layers' own loader for a model.json folder (what tfjs-node's file:// handler does). */
export function loadLayersModel(modelJson: string): Promise<tfl.LayersModel> {
  const dir = join(modelJson, '..');
  return tfl.loadLayersModel({
    async load() {
      const json = JSON.parse(readFileSync(modelJson, 'utf8')) as tf.io.ModelJSON;
      const weightData = json.weightsManifest.flatMap((g) => g.paths.map((p) => new Uint8Array(readFileSync(join(dir, p))).buffer));
      return { modelTopology: json.modelTopology, weightSpecs: json.weightsManifest.flatMap((g) => g.weights), weightData };
    },
  });
}

/** A ResNet-style block: Conv2D without bias, BatchNormalization, a skip connection (Add), global pooling. */
export function resnetBlock(): tfl.LayersModel {
  const input = tfl.input({ shape: [8, 8, 2], name: 'image' });
  const stem = tfl.layers.conv2d({ filters: 4, kernelSize: 3, padding: 'same', useBias: false, name: 'stem' }).apply(input) as tfl.SymbolicTensor;
  const bn = tfl.layers.batchNormalization({ name: 'bn' }).apply(stem) as tfl.SymbolicTensor;
  const relu = tfl.layers.activation({ activation: 'relu', name: 'relu' }).apply(bn) as tfl.SymbolicTensor;
  const conv = tfl.layers.conv2d({ filters: 4, kernelSize: 3, padding: 'same', name: 'conv' }).apply(relu) as tfl.SymbolicTensor;
  const add = tfl.layers.add({ name: 'add' }).apply([conv, relu]) as tfl.SymbolicTensor;
  const pool = tfl.layers.globalAveragePooling2d({ name: 'pool' }).apply(add) as tfl.SymbolicTensor;
  const head = tfl.layers.dense({ units: 3, activation: 'softmax', name: 'head' }).apply(pool) as tfl.SymbolicTensor;
  return tfl.model({ inputs: input, outputs: head, name: 'resnet_block' });
}

/** A bidirectional LSTM text classifier over token ids. */
export function biLstmClassifier(): tfl.LayersModel {
  const input = tfl.input({ shape: [6], name: 'tokens' });
  const embed = tfl.layers.embedding({ inputDim: 20, outputDim: 5, name: 'embed' }).apply(input) as tfl.SymbolicTensor;
  const lstm = tfl.layers.bidirectional({ layer: tfl.layers.lstm({ units: 4 }) as tfl.RNN, name: 'bilstm' }).apply(embed) as tfl.SymbolicTensor;
  const head = tfl.layers.dense({ units: 2, name: 'logits' }).apply(lstm) as tfl.SymbolicTensor;
  return tfl.model({ inputs: input, outputs: head, name: 'bilstm' });
}

/** NumPy arrays that feed twoInTwoOut: its inputs a and b, its targets cls (3 classes) and reg (for writeNpyData). */
export const TWO_IN_TWO_OUT_ARRAYS: Record<string, { shape: number[]; kind: 'float' | { classes: number } }> = { a: { shape: [5], kind: 'float' }, b: { shape: [3], kind: 'float' }, cls: { shape: [], kind: { classes: 3 } }, reg: { shape: [1], kind: 'float' } };

/** Two inputs, two heads (a classifier and a regressor), dropout and a shared Dense called twice. */
export function twoInTwoOut(): tfl.LayersModel {
  const a = tfl.input({ shape: [5], name: 'a' });
  const b = tfl.input({ shape: [3], name: 'b' });
  const shared = tfl.layers.dense({ units: 5, activation: 'tanh', name: 'shared' });
  const s1 = shared.apply(a) as tfl.SymbolicTensor;
  const s2 = shared.apply(s1) as tfl.SymbolicTensor;
  const cat = tfl.layers.concatenate({ name: 'cat' }).apply([s2, b]) as tfl.SymbolicTensor;
  const hidden = tfl.layers.dense({ units: 8, activation: 'relu', name: 'hidden' }).apply(cat) as tfl.SymbolicTensor;
  const drop = tfl.layers.dropout({ rate: 0.25, name: 'drop' }).apply(hidden) as tfl.SymbolicTensor;
  const cls = tfl.layers.dense({ units: 3, name: 'cls' }).apply(drop) as tfl.SymbolicTensor;
  const reg = tfl.layers.dense({ units: 1, name: 'reg' }).apply(hidden) as tfl.SymbolicTensor;
  return tfl.model({ inputs: [a, b], outputs: [cls, reg], name: 'two_in_two_out' });
}

/**
 * Self-attention over a sequence: input [4, 6] → MultiHeadAttention (2 heads, keyDim 3, Shoal's class:
 * agents/exec/graph/multiHeadAttention.ts) → Add residual → LayerNormalization → Flatten → Dense(2).
 *
 * tfjs 4.22's MultiHeadAttention, which Shoal's class extends, exists only among tfjs-layers' ES modules
 * (not in the package index), while Node resolves `@tensorflow/tfjs-layers` (`tfl` here) to its CommonJS
 * bundle: a second copy of every class, whose Layer the attention layer does not extend. So this model
 * is built with the ES modules throughout, as the agent bundle is. Loading them registers their copy of
 * every layer class in tfjs's registry (which keeps the last), so `tfl`'s loaders would then build
 * classes that name variables apart from `tfl`'s: the registry is put back once the model is built
 * (MultiHeadAttention stays). The two copies also count variable names apart, hence layer names that
 * no other model here uses.
 */
export async function attentionBlock(): Promise<tfl.LayersModel> {
  const input = tfl.input({ shape: [4, 6], name: 'seq' });
  const attention = new MultiHeadAttention({ numHeads: 2, keyDim: 3, name: 'mha' }).apply(input, { value: input }) as tfl.SymbolicTensor;
  const residual = tfl.layers.add({ name: 'residual' }).apply([input, attention]) as tfl.SymbolicTensor;
  const norm = tfl.layers.layerNormalization({ name: 'norm' }).apply(residual) as tfl.SymbolicTensor;
  const flat = tfl.layers.flatten({ name: 'flat' }).apply(norm) as tfl.SymbolicTensor;
  const out = tfl.layers.dense({ units: 2, name: 'out' }).apply(flat) as tfl.SymbolicTensor;
  return tfl.model({ inputs: input, outputs: out, name: 'attention_block' });
}

/**
 * Many layer kinds in one chain: padding, depthwise and separable convolutions, pooling both ways, a
 * transposed convolution, up-sampling, cropping, reshape, permute, TimeDistributed(Dense), a
 * Conv1D, GRU, SimpleRNN, a nested Sequential (frozen in the saved file: see freezeNested) and LeakyReLU.
 */
export function layerZoo(): tfl.LayersModel {
  const L = tfl.layers;
  const input = tfl.input({ shape: [8, 8, 3], name: 'img' });
  const chain = [
    L.zeroPadding2d({ padding: 1, name: 'pad' }),
    L.depthwiseConv2d({ kernelSize: 3, depthMultiplier: 2, name: 'depthwise' }),
    L.separableConv2d({ filters: 4, kernelSize: 3, padding: 'same', activation: 'relu', name: 'separable' }),
    L.maxPooling2d({ poolSize: 2, name: 'maxpool' }),
    L.conv2dTranspose({ filters: 3, kernelSize: 2, strides: 2, name: 'deconv' }),
    L.upSampling2d({ size: [2, 2], name: 'up' }),
    L.cropping2D({ cropping: [[4, 4], [4, 4]], name: 'crop' }),
    L.averagePooling2d({ poolSize: 2, name: 'avgpool' }),
    L.reshape({ targetShape: [16, 3], name: 'reshape' }),
    L.permute({ dims: [2, 1], name: 'permute' }),
    L.timeDistributed({ layer: L.dense({ units: 5, activation: 'elu' }), name: 'td' }),
    L.conv1d({ filters: 4, kernelSize: 2, padding: 'same', name: 'conv1d' }),
    L.gru({ units: 4, returnSequences: true, name: 'gru' }),
    L.simpleRNN({ units: 3, name: 'rnn' }),
    tfl.sequential({ name: 'frozen_block', layers: [L.dense({ units: 3, inputShape: [3], name: 'frozen_dense' })] }),
    L.leakyReLU({ alpha: 0.2, name: 'leaky' }),
    L.dense({ units: 2, activation: 'softmax', name: 'zoo_out' }),
  ];
  const out = chain.reduce((x: tfl.SymbolicTensor, layer) => layer.apply(x) as tfl.SymbolicTensor, input);
  return tfl.model({ inputs: input, outputs: out, name: 'layer_zoo' });
}

/**
 * Mark a nested model frozen in a saved model.json the way Keras writes it ("trainable": false on the
 * nested model's config), which tfjs's own save does not.
 */
/** An MLP whose weights carry Keras constraints: max-norm kernels and a non-negative bias. */
export function constrainedMlp(): tfl.LayersModel {
  const input = tfl.input({ shape: [6], name: 'features' });
  const hidden = tfl.layers.dense({ units: 8, activation: 'relu', kernelConstraint: tfl.constraints.maxNorm({ maxValue: 0.4, axis: 0 }), name: 'hidden' }).apply(input);
  const out = tfl.layers.dense({ units: 3, activation: 'softmax', kernelConstraint: tfl.constraints.unitNorm({ axis: 0 }), biasConstraint: tfl.constraints.nonNeg(), name: 'probs' }).apply(hidden);
  return tfl.model({ inputs: input, outputs: out as tfl.SymbolicTensor, name: 'constrained' });
}

export function freezeNested(modelJson: string, name: string): void {
  const doc = JSON.parse(readFileSync(modelJson, 'utf8')) as { modelTopology: { config: { layers: Array<{ name?: string; config: Record<string, unknown> }> } } };
  const layer = doc.modelTopology.config.layers.find((l) => (l.name ?? l.config.name) === name);
  if (!layer) throw new Error(`No nested model "${name}" in ${modelJson}.`);
  layer.config.trainable = false;
  writeFileSync(modelJson, JSON.stringify(doc));
}

/** Deterministic data of a model's shapes as .npy files: float inputs, integer tokens/labels, float targets. */
export function writeNpyData(dir: string, arrays: Record<string, { shape: number[]; kind: 'float' | { classes: number } }>, samples: number, seed = 1): void {
  mkdirSync(dir, { recursive: true });
  let state = seed >>> 0;
  const next = () => ((state = (Math.imul(state, 1664525) + 1013904223) >>> 0) / 4294967296);
  for (const [name, spec] of Object.entries(arrays)) {
    const size = samples * spec.shape.reduce((a, b) => a * b, 1);
    if (spec.kind === 'float') writeNpy(join(dir, `${name}.npy`), Float32Array.from({ length: size }, () => next() * 2 - 1), [samples, ...spec.shape]);
    else {
      const classes = spec.kind.classes;
      writeNpy(join(dir, `${name}.npy`), Int32Array.from({ length: size }, () => Math.floor(next() * classes)), [samples, ...spec.shape]);
    }
  }
}
