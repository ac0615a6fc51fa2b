import * as tf from '@tensorflow/tfjs-core';

/**
 * The tensors of a pipeline cut travel as one float32 tensor with a row per sample: row r is the
 * concatenation of every crossing tensor's values for sample r. The schedules, row transfers and
 * tensor-parallel row pieces move that one tensor as before; a stage unpacks it by the cut's shapes.
 */
export function unpackColumns(packed: tf.Tensor, shapes: number[][]): tf.Tensor[] {
  const rows = packed.shape[0];
  const widths = shapes.map((s) => s.reduce((a, b) => a * b, 1));
  if (shapes.length === 1) return [tf.reshape(packed, [rows, ...shapes[0]])];
  const parts = tf.split(packed as tf.Tensor2D, widths, 1);
  return parts.map((p, i) => {
    const shaped = tf.reshape(p, [rows, ...shapes[i]]);
    if (shaped !== p) p.dispose();
    return shaped;
  });
}

export function packColumns(tensors: tf.Tensor[]): tf.Tensor {
  return tf.tidy(() => {
    const flat = tensors.map((t) => tf.reshape(t.dtype === 'float32' ? t : tf.cast(t, 'float32'), [t.shape[0], -1]));
    return flat.length === 1 ? flat[0].clone() : tf.concat(flat, 1);
  });
}
