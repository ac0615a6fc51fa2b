import * as tf from '@tensorflow/tfjs-core';
import type * as tfl from '@tensorflow/tfjs-layers/dist/index.js';

/**
 * Moving statistics of BatchNormalization that do not depend on the plan. tfjs-layers updates them in
 * every training call, so their value would depend on how many micro-batches a process runs and in
 * what order — different in every plan. Shoal instead stops the layer's own update (its momentum is
 * set to 1, which makes tfjs's update a no-op), records each slice's batch mean and variance, sums
 * them over the data-parallel group at the end of the step, and applies Keras's update once with the
 * average over the step's slices: m ← m − (m − mean)(1 − momentum). The slices are fixed by the virtual
 * nodes and micro-batches (VirtualFlow's rule), so every plan with the same slicing gets the same
 * statistics; with one slice per step this is exactly Keras's update.
 */
interface Tracked {
  layer: tfl.layers.Layer;
  momentum: number;
  channels: number;
  /** Running sums of the slices' means and variances this step, kept on the device until the step ends. */
  mean: tf.Tensor | null;
  variance: tf.Tensor | null;
}

type BatchNormLike = tfl.layers.Layer & { momentum: number; axis: number; movingMean: tfl.LayerVariable; movingVariance: tfl.LayerVariable };

export class BatchNormStatistics {
  private readonly tracked = new Map<tfl.layers.Layer, Tracked>();
  private slices = 0;

  /** Take over the moving statistics of a BatchNormalization layer. */
  track(layer: tfl.layers.Layer): void {
    if (this.tracked.has(layer)) return;
    const bn = layer as BatchNormLike;
    const channels = bn.movingMean.shape.reduce((a: number, b) => a * (b ?? 1), 1);
    this.tracked.set(layer, { layer, momentum: bn.momentum, channels, mean: null, variance: null });
    bn.momentum = 1;
  }

  isTracked(layer: tfl.layers.Layer): boolean {
    return this.tracked.has(layer);
  }

  /** Record one slice's batch statistics of the layer's input (as tfjs's training call computes them). */
  record(layer: tfl.layers.Layer, input: tf.Tensor): void {
    const entry = this.tracked.get(layer)!;
    const axis = (layer as BatchNormLike).axis;
    const channelAxis = axis < 0 ? input.rank + axis : axis;
    const reduction = Array.from({ length: input.rank }, (_, i) => i).filter((i) => i !== channelAxis);
    const { mean, variance } = tf.tidy(() => tf.moments(input, reduction));
    entry.mean = addTo(entry.mean, mean);
    entry.variance = addTo(entry.variance, variance);
  }

  /** Count one slice of the step (a micro-batch of one virtual node), whichever layers it touched. */
  countSlice(): void {
    this.slices += 1;
  }

  get size(): number {
    return this.tracked.size;
  }

  /** This step's sums, flat (every tracked layer's means then variances), and the slice count last. */
  sums(): Float32Array {
    const tracked = [...this.tracked.values()];
    const out = new Float32Array(tracked.reduce((n, t) => n + 2 * t.channels, 0) + 1);
    let at = 0;
    for (const t of tracked) {
      for (const sum of [t.mean, t.variance]) {
        if (sum) out.set(sum.dataSync(), at);
        at += t.channels;
      }
    }
    out[at] = this.slices;
    return out;
  }

  /** Apply the step's update from sums over the whole data-parallel group (sums() added up), and reset. */
  apply(total: Float32Array): void {
    const slices = total[total.length - 1];
    let at = 0;
    for (const t of this.tracked.values()) {
      const bn = t.layer as BatchNormLike;
      const n = t.channels;
      if (slices > 0) {
        const decay = 1 - t.momentum;
        update(bn.movingMean, total.subarray(at, at + n), slices, decay);
        update(bn.movingVariance, total.subarray(at + n, at + 2 * n), slices, decay);
      }
      at += 2 * n;
      t.mean?.dispose();
      t.variance?.dispose();
      t.mean = t.variance = null;
    }
    this.slices = 0;
  }
}

/** sum + t, both disposed but the result (t alone when there is no sum yet). */
function addTo(sum: tf.Tensor | null, t: tf.Tensor): tf.Tensor {
  if (!sum) return tf.keep(t);
  const next = tf.keep(tf.add(sum, t));
  sum.dispose();
  t.dispose();
  return next;
}

function update(variable: tfl.LayerVariable, sum: Float32Array, slices: number, decay: number): void {
  tf.tidy(() => {
    const current = variable.read();
    const average = tf.div(tf.tensor(sum, current.shape), slices);
    // Keras's form of the moving average: m − (m − x)(1 − momentum).
    variable.write(tf.sub(current, tf.mul(tf.sub(current, average), decay)));
  });
}
