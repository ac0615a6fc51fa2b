import { mixSeeds, mulberry32 } from '../../engine/util/prng.js';

/**
 * Initial weights are a pure function of (plan seed, layer id, tensor name), never of which process or
 * stage holds the layer: a layer starts identical whether it runs alone, in a pipeline stage, or in
 * every data-parallel replica.
 */
export function glorotUniform(seed: number, layerId: string, name: string, shape: number[], fanIn: number, fanOut: number): Float32Array {
  const limit = Math.sqrt(6 / (fanIn + fanOut));
  const rand = mulberry32(mixSeeds('init', seed, layerId, name));
  const size = shape.reduce((a, b) => a * b, 1);
  const out = new Float32Array(size);
  for (let i = 0; i < size; i++) out[i] = (rand() * 2 - 1) * limit;
  return out;
}
