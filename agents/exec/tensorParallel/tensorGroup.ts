import * as tf from '@tensorflow/tfjs-core';
import { chunkBounds } from '../../comm/chunking.js';
import { allGather, allReduce } from '../../comm/collectives.js';
import type { ProcessGroup } from '../../comm/processGroup.js';

/**
 * The tensor-parallel group of one stage replica, seen as tensors: the collectives a sharded stage
 * needs between its local computations. Every shard executes the same sequence of layers, so every
 * shard issues the same collectives in the same order; a running counter names them identically on
 * every member without any agreement round.
 */
export class TensorGroup {
  private sequence = 0;
  /** Where the shard is (e.g. "s17/v0/forward3"): named in the tags, so a timeout says which step and pass. */
  phase = '';

  constructor(readonly group: ProcessGroup) {}

  get size(): number {
    return this.group.size;
  }

  /** This shard's position in the group: its slice of every split axis. */
  get index(): number {
    return this.group.index;
  }

  private tag(what: string): string {
    return `${this.phase}/tp${this.sequence++}/${what}`;
  }

  /** The rows [from, to) of an n-row tensor that this shard holds when the batch is split (S0). */
  rowRange(rows: number, shard = this.index): [number, number] {
    return chunkBounds(rows, this.size, shard);
  }

  /** Sum over the group (P → B); a new tensor, identical on every shard. */
  async allReduceSum(t: tf.Tensor): Promise<tf.Tensor> {
    const values = (t.dataSync() as Float32Array).slice();
    await allReduce(this.group, values, this.tag('sum'));
    return tf.tensor(values, t.shape, 'float32');
  }

  /**
   * Concatenate every shard's rows (S0 → B). Shards may hold a row more or less than others
   * (`rowRange`), so each contributes a slot of the largest share and the padding is dropped.
   */
  async allGatherRows(t: tf.Tensor, totalRows: number): Promise<tf.Tensor> {
    const rowSize = t.size / Math.max(t.shape[0], 1);
    const slotRows = Math.ceil(totalRows / this.size);
    const buffer = new Float32Array(slotRows * rowSize * this.size);
    buffer.set(t.dataSync() as Float32Array, this.index * slotRows * rowSize);
    await allGather(this.group, buffer, this.tag('rows'));
    const out = new Float32Array(totalRows * rowSize);
    for (let k = 0; k < this.size; k++) {
      const [a, b] = this.rowRange(totalRows, k);
      out.set(buffer.subarray(k * slotRows * rowSize, (k * slotRows + (b - a)) * rowSize), a * rowSize);
    }
    return tf.tensor(out, [totalRows, ...t.shape.slice(1)], 'float32');
  }

  /** Concatenate every shard's slice of the last axis (S1 → B); slices are equal (validated). */
  async allGatherFeatures(t: tf.Tensor): Promise<tf.Tensor> {
    const row = tf.expandDims(t, 0);
    const parts = await this.allGatherRows(row, this.size);
    row.dispose();
    const whole = tf.tidy(() => tf.concat(tf.unstack(parts), t.shape.length - 1));
    parts.dispose();
    return whole;
  }

  /** This shard's rows of a whole tensor (B → S0). */
  ownRows(t: tf.Tensor): tf.Tensor {
    const [a, b] = this.rowRange(t.shape[0]);
    return tf.slice(t, a, b - a);
  }

  /** This shard's slice of the last axis of a whole tensor (B → S1). */
  ownFeatures(t: tf.Tensor): tf.Tensor {
    const last = t.shape.length - 1;
    const width = t.shape[last] / this.size;
    const begin = t.shape.map((_, i) => (i === last ? this.index * width : 0));
    const size = t.shape.map((d, i) => (i === last ? width : d));
    return tf.slice(t, begin, size);
  }

  /** Every shard's copy of a per-row vector, side by side: [size, rows] (for max/argmax over shards). */
  async allGatherVectors(v: Float32Array): Promise<Float32Array[]> {
    const buffer = new Float32Array(v.length * this.size);
    buffer.set(v, this.index * v.length);
    await allGather(this.group, buffer, this.tag('vec'));
    return Array.from({ length: this.size }, (_, k) => buffer.subarray(k * v.length, (k + 1) * v.length));
  }

  /** Sum a small array over the group, in place. */
  async sumInPlace(values: Float32Array): Promise<void> {
    await allReduce(this.group, values, this.tag('sum'));
  }
}
