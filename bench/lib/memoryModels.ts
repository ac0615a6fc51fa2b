// The memory benchmark's users' models, built with tfjs-layers: one of each family whose kept
// activations the cost model counts differently (dense, convolution and pooling, recurrence,
// attention). Sized so that activations are a large share of each device's memory, yet a step takes
// milliseconds on one core.
import { MultiHeadAttention } from '../../agents/exec/graph/multiHeadAttention.js';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tfl, type writeNpyData } from '../../test/support/userModels.js';

export interface BenchModel {
  build: () => tfl.LayersModel;
  /** The NumPy arrays that feed it (writeNpyData). */
  arrays: Parameters<typeof writeNpyData>[1];
}

const L = tfl.layers;
const classes = (n: number): BenchModel['arrays'][string] => ({ shape: [], kind: { classes: n } });

export const benchMlp: BenchModel = {
  build: () => tfl.sequential({ name: 'mlp', layers: [L.dense({ units: 256, activation: 'relu', inputShape: [784] }), L.dense({ units: 128, activation: 'relu' }), L.dense({ units: 10 })] }),
  arrays: { x: { shape: [784], kind: 'float' }, y: classes(10) },
};

export const benchCnn: BenchModel = {
  build: () =>
    tfl.sequential({
      name: 'cnn',
      layers: [
        L.conv2d({ filters: 8, kernelSize: 3, activation: 'relu', inputShape: [28, 28, 1] }),
        L.maxPooling2d({ poolSize: 2 }),
        L.conv2d({ filters: 16, kernelSize: 3, activation: 'relu' }),
        L.flatten(),
        L.dense({ units: 10 }),
      ],
    }),
  arrays: { x: { shape: [28, 28, 1], kind: 'float' }, y: classes(10) },
};

export const benchLstm: BenchModel = {
  build: () =>
    tfl.sequential({
      name: 'lstm',
      layers: [L.embedding({ inputDim: 50, outputDim: 16, inputLength: 20 }), L.lstm({ units: 32 }), L.dense({ units: 4 })],
    }),
  arrays: { x: { shape: [20], kind: { classes: 50 } }, y: classes(4) },
};

const SEQUENCE = 16;
const WIDTH = 32;

/** Embedding → 2 × (attention + residual + LayerNorm, MLP + residual + LayerNorm) → pooling → logits. */
export const benchTransformer: BenchModel = {
  build: () => {
    const ids = tfl.input({ shape: [SEQUENCE], name: 'tokens' });
    let x = L.embedding({ inputDim: 32, outputDim: WIDTH, name: 'embed' }).apply(ids) as tfl.SymbolicTensor;
    for (const b of [1, 2]) {
      const attention = new MultiHeadAttention({ numHeads: 4, keyDim: WIDTH / 4, name: `attention_${b}` }).apply(x, { value: x }) as tfl.SymbolicTensor;
      x = L.layerNormalization({ name: `norm_${b}a` }).apply(L.add({ name: `residual_${b}a` }).apply([x, attention])) as tfl.SymbolicTensor;
      const hidden = L.dense({ units: 2 * WIDTH, activation: 'relu', name: `mlp_${b}_up` }).apply(x) as tfl.SymbolicTensor;
      const down = L.dense({ units: WIDTH, name: `mlp_${b}_down` }).apply(hidden) as tfl.SymbolicTensor;
      x = L.layerNormalization({ name: `norm_${b}b` }).apply(L.add({ name: `residual_${b}b` }).apply([x, down])) as tfl.SymbolicTensor;
    }
    const pooled = L.globalAveragePooling1d({ name: 'pool' }).apply(x) as tfl.SymbolicTensor;
    const logits = L.dense({ units: 4, name: 'classifier' }).apply(pooled) as tfl.SymbolicTensor;
    return tfl.model({ inputs: ids, outputs: logits, name: 'transformer' });
  },
  arrays: { x: { shape: [SEQUENCE], kind: { classes: 32 } }, y: classes(4) },
};

/**
 * Save a model's topology alone as model.json (no weightsManifest): the agents start it from tfjs's
 * initializers, seeded by the plan. Weights are not saved because under tsx this process's copy of
 * tfjs-layers names the attention's sub-layer weights without their scope, which a weights manifest
 * would then list twice; the agents' bundle has one copy and names them as Keras does.
 */
export function saveTopology(model: tfl.LayersModel, dir: string): string {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, 'model.json');
  const modelTopology = model.toJSON(undefined, false);
  writeFileSync(file, JSON.stringify({ format: 'layers-model', generatedBy: 'shoal bench memory', convertedBy: null, modelTopology }));
  return file;
}
