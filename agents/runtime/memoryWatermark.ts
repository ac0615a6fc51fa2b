import * as tf from '@tensorflow/tfjs-core';
import { appendFileSync } from 'node:fs';

/**
 * The high-water mark of tensor memory on this agent, per step, for the memory benchmark. With
 * SHOAL_MEMORY_STATS set to a file, every step appends one JSON line: the bytes tensors' data buffers
 * held when it began (`startBytes`), the most they held at once during its forward and backward
 * passes (`passesPeakBytes`) and during the whole step, update included (`peakBytes`), what they still
 * held when it ended (`heldBytes`), and tfjs's own count at its peak (`peakNumBytes`:
 * `tf.memory().numBytes`, which counts a reshaped view of a buffer again).
 *
 * Sampling `tf.memory()` between calls would miss the top: a last stage runs forward, loss and backward
 * in one call, and its peak is inside. So the watermark follows tfjs's engine as it registers and
 * frees data buffers (every kernel output passes through `trackTensor`, every freed buffer through
 * `removeDataId`): exact to the allocation. A backend's scratch memory inside a kernel is not a tensor
 * and is not seen. Without the variable nothing is installed and nothing is paid.
 */
interface EngineInternals {
  state: { numBytes: number; tensorInfo: WeakMap<object, { bytes: number }> };
  trackTensor(t: tf.Tensor, backend: unknown): void;
  removeDataId(dataId: object, backend: unknown): void;
}

const statsFile = process.env.SHOAL_MEMORY_STATS;
/** Bytes of the data buffers this watermark saw registered and not yet freed. */
const counted = new WeakMap<object, number>();
let liveBytes = 0;
let peakBytes = 0;
let peakNumBytes = 0;
let startBytes = 0;
/** The step's high-water mark before its update began (its forward and backward passes). */
let passesPeakBytes = 0;

/** Follow the engine's buffers from now on (call before the first tensor is made). */
export function watchTensorMemory(): void {
  if (!statsFile) return;
  const engine = tf.engine() as unknown as EngineInternals;
  const track = engine.trackTensor.bind(engine);
  const remove = engine.removeDataId.bind(engine);
  engine.trackTensor = (t, backend) => {
    const known = engine.state.tensorInfo.has(t.dataId);
    track(t, backend);
    const info = engine.state.tensorInfo.get(t.dataId);
    if (!known && info) {
      counted.set(t.dataId, info.bytes);
      liveBytes += info.bytes;
      if (liveBytes > peakBytes) peakBytes = liveBytes;
    }
    if (engine.state.numBytes > peakNumBytes) peakNumBytes = engine.state.numBytes;
  };
  engine.removeDataId = (dataId, backend) => {
    remove(dataId, backend);
    const bytes = counted.get(dataId);
    if (bytes !== undefined && !engine.state.tensorInfo.has(dataId)) {
      counted.delete(dataId);
      liveBytes -= bytes;
    }
  };
}

/** A step begins: its watermark starts from what is held now. */
export function beginMemoryStep(): void {
  startBytes = liveBytes;
  peakBytes = liveBytes;
  passesPeakBytes = liveBytes;
  peakNumBytes = (tf.engine() as unknown as EngineInternals).state.numBytes;
}

/** The step's passes are done and its gradient sum and update begin: the watermark so far is theirs. */
export function memoryUpdateBegins(): void {
  passesPeakBytes = peakBytes;
}

/** A step ended on this agent: write its line. */
export function memoryStepDone(who: { rank: number; stage: number; replica: number; shard: number }, step: number): void {
  if (!statsFile) return;
  const line = { pid: process.pid, ...who, step, startBytes, passesPeakBytes, peakBytes, heldBytes: liveBytes, peakNumBytes };
  appendFileSync(statsFile, `${JSON.stringify(line)}\n`);
}
