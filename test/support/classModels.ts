// Tiny models that between them use every layer class tfjs-layers 4.22 registers and Shoal trains
// (test/integration/tfjsClasses.test.ts trains each on one agent and with model.fit). Each ends in a
// Dense(1) regression head, so one loss (mean squared error) serves them all.
import { tfl } from './userModels.js';

type Sym = tfl.SymbolicTensor;
const L = tfl.layers;
const on = (layer: { apply(x: Sym | Sym[]): unknown }, x: Sym | Sym[]) => layer.apply(x) as Sym;
const chain = (x: Sym, layers: Array<{ apply(x: Sym | Sym[]): unknown }>) => layers.reduce((t, layer) => on(layer, t), x);
const head = (x: Sym) => on(L.dense({ units: 1, name: 'head' }), x);

export interface ClassModel {
  name: string;
  model: tfl.LayersModel;
  /** Input layer name → shape (batch excluded), for writeNpyData. */
  inputs: Record<string, number[]>;
  /** Token inputs: values below this many classes. */
  tokens?: Record<string, number>;
}

/** Convolutions, normalisation, pooling, resampling, merges and activation layers on an image. */
function image(): ClassModel {
  const x = tfl.input({ shape: [6, 6, 2], name: 'image' });
  const body = chain(x, [
    L.zeroPadding2d({ padding: 1, name: 'pad' }),
    L.conv2d({ filters: 3, kernelSize: 3, useBias: false, name: 'conv' }),
    L.batchNormalization({ name: 'bn' }),
    L.reLU({ name: 'relu' }),
    L.depthwiseConv2d({ kernelSize: 2, name: 'depthwise' }),
    L.separableConv2d({ filters: 3, kernelSize: 2, padding: 'same', name: 'separable' }),
    L.conv2dTranspose({ filters: 2, kernelSize: 2, name: 'deconv' }),
    L.upSampling2d({ size: [2, 2], name: 'up' }),
    L.cropping2D({ cropping: [[1, 1], [1, 1]], name: 'crop' }),
    L.maxPooling2d({ poolSize: 2, name: 'maxpool' }),
    L.averagePooling2d({ poolSize: 2, strides: 1, name: 'avgpool' }),
  ]);
  const mean = on(L.globalAveragePooling2d({ name: 'gap' }), body);
  const max = on(L.globalMaxPooling2d({ name: 'gmp' }), body);
  const merged = [L.add({ name: 'add' }), L.average({ name: 'average' }), L.maximum({ name: 'maximum' }), L.minimum({ name: 'minimum' }), L.multiply({ name: 'multiply' })].map((m) => on(m, [mean, max]));
  const cat = on(L.concatenate({ name: 'cat' }), merged);
  const out = chain(cat, [
    L.dense({ units: 4, name: 'hidden' }),
    L.elu({ name: 'elu' }),
    L.leakyReLU({ alpha: 0.1, name: 'leaky' }),
    L.softmax({ name: 'softmax' }),
  ]);
  return { name: 'image', model: tfl.model({ inputs: x, outputs: head(out), name: 'image_classes' }), inputs: { image: [6, 6, 2] } };
}

/** Embedding, 1-D convolution and pooling, every recurrent layer and cell, wrappers, reshaping. */
function sequence(): ClassModel {
  const x = tfl.input({ shape: [8], name: 'tokens' });
  const body = chain(x, [
    L.embedding({ inputDim: 10, outputDim: 4, name: 'embed' }),
    L.conv1d({ filters: 4, kernelSize: 2, padding: 'same', name: 'conv1d' }),
    L.spatialDropout1d({ rate: 0, name: 'spatial_dropout' }),
    L.maxPooling1d({ poolSize: 2, name: 'maxpool1d' }),
    L.averagePooling1d({ poolSize: 2, strides: 1, name: 'avgpool1d' }),
    L.layerNormalization({ name: 'norm' }),
  ]);
  const branches = [
    on(L.lstm({ units: 3, name: 'lstm' }), body),
    chain(body, [L.gru({ units: 3, returnSequences: true, name: 'gru' }), L.simpleRNN({ units: 2, name: 'simple_rnn' })]),
    on(L.bidirectional({ layer: L.lstm({ units: 2 }) as tfl.RNN, name: 'bilstm' }), body),
    on(L.rnn({ cell: L.lstmCell({ units: 2 }), name: 'rnn_lstm_cell' }), body),
    on(L.rnn({ cell: [L.simpleRNNCell({ units: 2 }), L.gruCell({ units: 2 })], name: 'rnn_stacked' }), body),
    chain(body, [L.timeDistributed({ layer: L.dense({ units: 2 }), name: 'td' }), L.flatten({ name: 'td_flat' })]),
    on(L.globalAveragePooling1d({ name: 'gap1d' }), body),
    on(L.globalMaxPooling1d({ name: 'gmp1d' }), body),
    chain(body, [L.permute({ dims: [2, 1], name: 'permute' }), L.reshape({ targetShape: [12], name: 'reshape' })]),
  ];
  const out = on(L.concatenate({ name: 'cat' }), branches);
  return { name: 'sequence', model: tfl.model({ inputs: x, outputs: head(out), name: 'sequence_classes' }), inputs: { tokens: [8] }, tokens: { tokens: 10 } };
}

/** Dense-side classes the importer had no spec for: PReLU, Rescaling, Dot (both ways), RepeatVector. */
function vector(): ClassModel {
  const x = tfl.input({ shape: [5], name: 'features' });
  const body = chain(x, [
    L.dense({ units: 4, name: 'dense' }),
    L.prelu({ name: 'prelu', alphaInitializer: tfl.initializers.constant({ value: 0.2 }) }),
    L.rescaling({ scale: 0.5, offset: 0.1, name: 'rescale' }),
    L.activation({ activation: 'tanh', name: 'tanh' }),
    L.dropout({ rate: 0, name: 'dropout' }),
  ]);
  const a = on(L.dense({ units: 3, name: 'a' }), body);
  const b = on(L.dense({ units: 3, name: 'b' }), body);
  const dot = on(L.dot({ axes: 1, name: 'dot' }), [a, b]);
  const cosine = on(L.dot({ axes: 1, normalize: true, name: 'cosine' }), [a, b]);
  const repeated = chain(a, [L.repeatVector({ n: 3, name: 'repeat' }), L.flatten({ name: 'repeat_flat' })]);
  const out = on(L.concatenate({ name: 'cat' }), [dot, cosine, repeated]);
  return { name: 'vector', model: tfl.model({ inputs: x, outputs: head(out), name: 'vector_classes' }), inputs: { features: [5] } };
}

/** Three-dimensional convolution and pooling, and ConvLSTM2D over a short clip. */
function volume(): ClassModel {
  const v = tfl.input({ shape: [4, 4, 4, 1], name: 'volume' });
  const clip = tfl.input({ shape: [3, 4, 4, 1], name: 'clip' });
  const conv = on(L.conv3d({ filters: 2, kernelSize: 2, name: 'conv3d' }), v);
  const max = chain(conv, [L.maxPooling3d({ poolSize: 2, name: 'maxpool3d' }), L.flatten({ name: 'max_flat' })]);
  const avg = chain(conv, [L.averagePooling3d({ poolSize: 2, name: 'avgpool3d' }), L.flatten({ name: 'avg_flat' })]);
  const lstm = chain(clip, [L.convLstm2d({ filters: 2, kernelSize: 2, name: 'conv_lstm' }), L.flatten({ name: 'lstm_flat' })]);
  const out = on(L.concatenate({ name: 'cat' }), [max, avg, lstm]);
  return { name: 'volume', model: tfl.model({ inputs: [v, clip], outputs: head(out), name: 'volume_classes' }), inputs: { volume: [4, 4, 4, 1], clip: [3, 4, 4, 1] } };
}

/** By name; a model is built only when called (after a tfjs backend is ready). */
export const CLASS_MODELS: Record<string, () => ClassModel> = { image, sequence, vector, volume };
