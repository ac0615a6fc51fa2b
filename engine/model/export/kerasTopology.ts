import type { LayerNode, ModelGraph } from '../graph.js';

/**
 * The Keras-style topology of a model the agents train (a chain of input, dense, conv2d, maxPool2d,
 * flatten and reshape layers), as tfjs-layers' `model.json` carries it: a Sequential model whose layer
 * names are the graph's layer ids, so its weights are `<layerId>/kernel` and `<layerId>/bias`, the
 * names the agents' checkpoints use. Pure: the renderer can preview it too.
 */
export interface KerasLayerJson {
  class_name: string;
  config: Record<string, unknown>;
}

export interface SequentialTopology {
  class_name: 'Sequential';
  config: { name: string; layers: KerasLayerJson[] };
  keras_version: string;
  backend: string;
}

export interface WeightEntry {
  name: string;
  shape: number[];
  dtype: 'float32';
}

const ACTIVATIONS = new Set(['linear', 'relu', 'softmax']);

/**
 * Keras's default initializers, written out: a topology without them gets tfjs's defaults unseeded,
 * so every process building it (the agents, tensor-parallel shards among them) would draw its own
 * weights; written out, buildLayersModel seeds them from the plan.
 */
const INITIALIZERS = { kernel_initializer: { class_name: 'GlorotUniform', config: {} }, bias_initializer: { class_name: 'Zeros', config: {} } };

function layerJson(layer: LayerNode, batchInputShape: Array<number | null> | undefined): KerasLayerJson {
  const spec = layer.spec;
  const base: Record<string, unknown> = { name: layer.id, trainable: true, dtype: 'float32' };
  if (batchInputShape) base.batch_input_shape = batchInputShape;
  switch (spec.kind) {
    case 'dense':
      if (!ACTIVATIONS.has(spec.activation)) break;
      return { class_name: 'Dense', config: { ...base, units: spec.units, activation: spec.activation, use_bias: true, ...INITIALIZERS } };
    case 'conv2d':
      return {
        class_name: 'Conv2D',
        config: {
          ...base,
          filters: spec.filters,
          kernel_size: spec.kernelSize,
          strides: spec.strides,
          padding: spec.padding,
          data_format: 'channels_last',
          dilation_rate: [1, 1],
          activation: spec.activation,
          use_bias: true,
          ...INITIALIZERS,
        },
      };
    case 'maxPool2d':
      return { class_name: 'MaxPooling2D', config: { ...base, pool_size: spec.poolSize, strides: spec.strides, padding: 'valid', data_format: 'channels_last' } };
    case 'flatten':
      return { class_name: 'Flatten', config: { ...base, data_format: 'channels_last' } };
    case 'reshape':
      return { class_name: 'Reshape', config: { ...base, target_shape: spec.targetShape } };
    default:
      break;
  }
  throw new Error(
    `Layer "${layer.id}" (${spec.kind}) cannot be exported in tfjs format yet: only models built from dense, conv2d, maxPool2d, flatten and reshape layers (mlp, mlp-wide, cnn) can.`,
  );
}

/** The parameters of a layer in tfjs's order and layout: kernel [in, out] or [kh, kw, cin, cout], then bias. */
export function layerWeights(layer: LayerNode, inputShape: number[]): WeightEntry[] {
  const spec = layer.spec;
  if (spec.kind === 'dense') {
    return [
      { name: `${layer.id}/kernel`, shape: [inputShape[inputShape.length - 1], spec.units], dtype: 'float32' },
      { name: `${layer.id}/bias`, shape: [spec.units], dtype: 'float32' },
    ];
  }
  if (spec.kind === 'conv2d') {
    return [
      { name: `${layer.id}/kernel`, shape: [spec.kernelSize[0], spec.kernelSize[1], inputShape[2], spec.filters], dtype: 'float32' },
      { name: `${layer.id}/bias`, shape: [spec.filters], dtype: 'float32' },
    ];
  }
  return [];
}

/** Topology and the weights it expects, in order, for a sequential model graph. */
export function kerasTopology(graph: ModelGraph, generatedBy: string): { topology: SequentialTopology; weights: WeightEntry[] } {
  const [input, ...rest] = graph.layers;
  if (!input || input.spec.kind !== 'input') throw new Error(`Model "${graph.name}" does not start with an input layer, so it cannot be exported in tfjs format.`);
  rest.forEach((layer, i) => {
    const previous = i === 0 ? input.id : rest[i - 1].id;
    if (layer.inputs.length !== 1 || layer.inputs[0] !== previous) {
      throw new Error(`Model "${graph.name}" is not a chain of layers (layer "${layer.id}" does not follow "${previous}"); only sequential models can be exported in tfjs format yet.`);
    }
  });
  if (rest.length === 0) throw new Error(`Model "${graph.name}" has no layers after its input.`);
  const layers: KerasLayerJson[] = [];
  const weights: WeightEntry[] = [];
  let shape = input.outputShape;
  rest.forEach((layer, i) => {
    layers.push(layerJson(layer, i === 0 ? [null, ...input.outputShape] : undefined));
    weights.push(...layerWeights(layer, shape));
    shape = layer.outputShape;
  });
  return {
    topology: { class_name: 'Sequential', config: { name: graph.name, layers }, keras_version: generatedBy, backend: 'tensor_flow.js' },
    weights,
  };
}
