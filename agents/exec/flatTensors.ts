import * as tf from '@tensorflow/tfjs-core';

/** Tensors as one flat array, in order (what a collective sums). */
export function flatten(tensors: tf.Tensor[]): Float32Array {
  const total = tensors.reduce((n, t) => n + t.size, 0);
  const out = new Float32Array(total);
  let offset = 0;
  for (const t of tensors) {
    out.set(t.dataSync() as Float32Array, offset);
    offset += t.size;
  }
  return out;
}

/** Split a flat array back into tensors shaped like `like`. */
export function unflatten(flat: Float32Array, like: tf.Tensor[]): tf.Tensor[] {
  let offset = 0;
  return like.map((t) => {
    const part = flat.subarray(offset, offset + t.size);
    offset += t.size;
    return tf.tensor(part, t.shape, 'float32');
  });
}
