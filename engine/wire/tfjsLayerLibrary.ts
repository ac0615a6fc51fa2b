import type { SymbolicTensor } from '@tensorflow/tfjs-layers/dist/engine/topology.js';
import { deserialize } from '@tensorflow/tfjs-layers/dist/layers/serialization.js';
import { convertPythonicToTs } from '@tensorflow/tfjs-layers/dist/utils/serialization_utils.js';
import type { BuiltLayer, BuiltWeight, LayerLibrary } from '../model/import/layerLibrary.js';
import type { Json } from '../model/import/configValues.js';
import { isLayerClass, registeredClasses, tfjs } from './tfjsLayers.js';

/** Registered classes the importer reads structurally (a model's inputs and nested models), never builds. */
const CONTAINERS = new Set(['InputLayer', 'Sequential', 'Functional', 'Model']);

type AddWeight = (this: { name: string }, name: string, shape: number[], dtype?: string, initializer?: unknown, regularizer?: unknown, trainable?: boolean) => unknown;

/**
 * Runs `build` with every layer's `addWeight` recording the weight instead of creating it: the
 * shapes and trainability are what the layer declares, but no initializer runs and nothing is
 * allocated, so a config of `units: 2e9` is measured, not attempted. Building on symbolic inputs
 * reads weights nowhere (only `computeOutputShape` runs), so a placeholder stands in for each.
 */
function withDeclaredWeights<T>(build: () => T): { result: T; weights: BuiltWeight[] } {
  const proto = tfjs.layers.Layer.prototype as unknown as { addWeight: AddWeight };
  const original = proto.addWeight;
  const weights: BuiltWeight[] = [];
  proto.addWeight = function (name, shape, _dtype, _initializer, _regularizer, trainable) {
    weights.push({ name: `${this.name}/${name}`, shape: [...shape], trainable: trainable ?? true });
    return { name, shape: [...shape], trainable: trainable ?? true, read: () => { throw new Error(`weight ${name} is a placeholder`); } };
  };
  try {
    return { result: build(), weights };
  } finally {
    proto.addWeight = original;
  }
}

const shapeOf = (t: SymbolicTensor) => t.shape.slice(1);

/**
 * Shapes and weights of any layer class registered with tfjs-layers (the user's `--layers` classes
 * included), from the layer tfjs-layers builds: its own constructor reads the config, its own `build`
 * declares the weights, its own `computeOutputShape` gives the output.
 */
export const tfjsLayerLibrary: LayerLibrary = {
  knows(className) {
    const entry = registeredClasses()[className];
    return entry !== undefined && !CONTAINERS.has(className) && isLayerClass(entry[0]);
  },
  classNames() {
    return Object.keys(registeredClasses()).filter((name) => this.knows(name)).sort();
  },
  build(className, config: Json, inputShapes): BuiltLayer {
    const layer = deserialize(convertPythonicToTs({ class_name: className, config } as never) as never) as InstanceType<typeof tfjs.layers.Layer>;
    const inputs = inputShapes.map((shape) => tfjs.input({ batchShape: [null, ...shape] }));
    const { result, weights } = withDeclaredWeights(() => layer.apply(inputs.length === 1 ? inputs[0] : inputs));
    const output = (Array.isArray(result) ? result[0] : result) as SymbolicTensor;
    const outputShape = shapeOf(output);
    if (!outputShape.every((d): d is number => typeof d === 'number' && Number.isInteger(d) && d >= 0)) {
      throw new Error(`tfjs-layers gives it the output shape [${outputShape.map((d) => d ?? 'null')}], with a dimension it cannot size.`);
    }
    return { outputShape, weights };
  },
};
