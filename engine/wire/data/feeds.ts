import type { DatasetFeed } from '../../data/datasetDescription.js';
import type { ModelArray } from '../../data/modelArrays.js';

/**
 * Pair a description's feeds with the model's inputs (or targets): by `layer`, or the one feed with the
 * one array. Without feeds, `fallback` gives each array its default (e.g. the last column), or says why
 * there is none. Errors name the data, the model's layers and what to write.
 */
export function pairFeeds(what: string, side: 'inputs' | 'outputs', feeds: DatasetFeed[] | undefined, model: ModelArray[],
  fallback: (array: ModelArray) => DatasetFeed | string): Array<{ array: ModelArray; feed: DatasetFeed }> {
  const role = side === 'inputs' ? 'input' : 'output';
  const names = model.map((a) => `'${a.name}'`).join(', ');
  if (!feeds) {
    return model.map((array) => {
      const feed = fallback(array);
      if (typeof feed === 'string') throw new Error(`${what}: ${feed}`);
      return { array, feed };
    });
  }
  if (feeds.length === 1 && model.length === 1 && (feeds[0].layer === undefined || feeds[0].layer === model[0].name)) return [{ array: model[0], feed: feeds[0] }];
  const byLayer = new Map(feeds.map((f) => [f.layer, f]));
  for (const f of feeds) {
    if (f.layer === undefined || !model.some((a) => a.name === f.layer)) {
      throw new Error(`${what}: ${side} names ${f.layer === undefined ? 'no layer' : `layer '${f.layer}'`}, but the model's ${role}s are ${names}. Write one entry per ${role} with its "layer".`);
    }
  }
  return model.map((array) => {
    const feed = byLayer.get(array.name);
    if (!feed) throw new Error(`${what}: nothing feeds model ${role} '${array.name}'; ${side} covers ${feeds.map((f) => `'${f.layer}'`).join(', ')} of ${names}.`);
    return { array, feed };
  });
}

/** A fixed per-sample shape, or an error naming the layer (a model dim of any size cannot be fed from a table). */
export function fixedShape(what: string, array: ModelArray, role: string): number[] {
  if (array.shape.some((d) => !(d >= 0))) throw new Error(`${what}: model ${role} '${array.name}' takes shape (${array.shape.map((d) => (d < 0 ? 'None' : d)).join(', ')}); give the layer a fixed size to read it from this data.`);
  return array.shape;
}

/** (x - mean) / std per feature, or identity. */
export function normalizer(what: string, normalize: { mean: number | number[]; std: number | number[] } | undefined, features: number): ((v: number, j: number) => number) | null {
  if (!normalize) return null;
  const { mean, std } = normalize;
  for (const [name, v] of [['mean', mean], ['std', std]] as const) {
    if (Array.isArray(v) && v.length !== features) throw new Error(`${what}: preprocessing.normalize.${name} has ${v.length} values, but there are ${features} features. Give one per feature or a single number.`);
  }
  const m = (j: number) => (Array.isArray(mean) ? mean[j] : mean);
  const s = (j: number) => (Array.isArray(std) ? std[j] : std);
  return (v, j) => (v - m(j)) / s(j);
}
