import type { Json } from './configValues.js';

/** One weight a built layer declared: its name inside the layer (`kernel`), shape and trainability. */
export interface BuiltWeight {
  name: string;
  shape: number[];
  trainable: boolean;
}

/** What a Keras runtime says of one layer it built on inputs of known shapes (batch excluded). */
export interface BuiltLayer {
  outputShape: number[];
  weights: BuiltWeight[];
}

/**
 * The Keras layer classes a runtime knows and builds — tfjs-layers' serialization registry, the
 * user's own registered classes included. Pure engine code does not import tfjs (it runs in the
 * renderer and in workers), so whoever has tfjs-layers hands the importer one of these.
 */
export interface LayerLibrary {
  /** Whether `className` is a registered layer class (not a model, an initializer or a regularizer). */
  knows(className: string): boolean;
  /** Every registered layer class, sorted. */
  classNames(): string[];
  /**
   * Builds the layer from its Keras config (snake_case, as a model.json holds it) on inputs of these
   * shapes. Throws an Error whose message is the library's reason when the config or the shapes do not fit.
   */
  build(className: string, config: Json, inputShapes: number[][]): BuiltLayer;
}
