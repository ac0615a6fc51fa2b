// Users' own models that read the bundled MNIST digits (one 28×28 input, ten classes), built with
// tfjs-layers and saved as model.json: what a benchmark trains when it needs a user model (the
// graph comes from the file, as an imported model's does) and real accuracy to compare schedules on.
import { saveLayersModel, tfl } from '../../test/support/userModels.js';

/** Two residual blocks (Conv2D, BatchNorm, Add) then global pooling: skip connections for any cut. */
export function residualCnn(): tfl.LayersModel {
  const input = tfl.input({ shape: [28, 28, 1], name: 'digits' });
  let x = tfl.layers.conv2d({ filters: 8, kernelSize: 3, strides: 2, padding: 'same', activation: 'relu', name: 'stem' }).apply(input) as tfl.SymbolicTensor;
  for (const [i, filters] of [8, 16].entries()) {
    if (filters !== x.shape[3]) x = tfl.layers.conv2d({ filters, kernelSize: 1, strides: 2, name: `project_${i}` }).apply(x) as tfl.SymbolicTensor;
    let y = tfl.layers.conv2d({ filters, kernelSize: 3, padding: 'same', useBias: false, name: `conv_${i}a` }).apply(x) as tfl.SymbolicTensor;
    y = tfl.layers.batchNormalization({ name: `bn_${i}` }).apply(y) as tfl.SymbolicTensor;
    y = tfl.layers.activation({ activation: 'relu', name: `relu_${i}` }).apply(y) as tfl.SymbolicTensor;
    y = tfl.layers.conv2d({ filters, kernelSize: 3, padding: 'same', name: `conv_${i}b` }).apply(y) as tfl.SymbolicTensor;
    x = tfl.layers.add({ name: `add_${i}` }).apply([x, y]) as tfl.SymbolicTensor;
  }
  const pooled = tfl.layers.globalAveragePooling2d({ name: 'pool' }).apply(x) as tfl.SymbolicTensor;
  const output = tfl.layers.dense({ units: 10, activation: 'softmax', name: 'classes' }).apply(pooled) as tfl.SymbolicTensor;
  return tfl.model({ inputs: input, outputs: output, name: 'residual_cnn' });
}

/** The digits read row by row: 28 steps of 28 pixels through two stacked GRUs. */
export function rowGru(): tfl.LayersModel {
  const model = tfl.sequential({ name: 'row_gru' });
  model.add(tfl.layers.reshape({ targetShape: [28, 28], inputShape: [28, 28, 1], name: 'rows' }));
  model.add(tfl.layers.gru({ units: 32, returnSequences: true, name: 'gru_1' }));
  model.add(tfl.layers.gru({ units: 32, name: 'gru_2' }));
  model.add(tfl.layers.dense({ units: 32, activation: 'relu', name: 'hidden' }));
  model.add(tfl.layers.dense({ units: 10, activation: 'softmax', name: 'classes' }));
  return model;
}

export const MNIST_USER_MODELS = { 'residual-cnn': residualCnn, 'row-gru': rowGru } as const;

/** Saves one of the models above under `dir`; returns its model.json path. */
export function saveMnistUserModel(name: keyof typeof MNIST_USER_MODELS, dir: string): Promise<string> {
  const model = MNIST_USER_MODELS[name]();
  model.compile({ optimizer: 'adam', loss: 'sparseCategoricalCrossentropy', metrics: ['accuracy'] });
  return saveLayersModel(model, dir);
}
