import { readCheckpoint } from '../../engine/wire/checkpointFile.js';
import { latestCheckpoint } from '../../engine/node/jobs/runStore.js';

/** The parameters (not optimizer slots) of the newest checkpoint in a run's checkpoints folder: name → values. */
export function readParams(checkpointsDir: string): Map<string, Float32Array> {
  const file = latestCheckpoint(checkpointsDir);
  if (!file) throw new Error(`No checkpoint in ${checkpointsDir}`);
  const { header, body } = readCheckpoint(file);
  return new Map(header.tensors.filter((t) => !t.slot).map((t) => [t.name, body.slice(t.offset, t.offset + t.length)]));
}

/** Largest absolute difference relative to the largest magnitude of the reference tensor. */
export function maxRelativeError(actual: Float32Array, expected: Float32Array): number {
  if (actual.length !== expected.length) return Infinity;
  let diff = 0;
  let scale = 0;
  for (let i = 0; i < expected.length; i++) {
    diff = Math.max(diff, Math.abs(actual[i] - expected[i]));
    scale = Math.max(scale, Math.abs(expected[i]));
  }
  return diff / Math.max(scale, 1e-12);
}

/**
 * Largest absolute difference relative to the largest change of the reference from its start:
 * max |a − b| / max |b − b₀|. A large weight's small update cannot hide an error here.
 */
export function maxUpdateError(actual: Float32Array, expected: Float32Array, initial: Float32Array): number {
  if (actual.length !== expected.length || initial.length !== expected.length) return Infinity;
  let diff = 0;
  let update = 0;
  for (let i = 0; i < expected.length; i++) {
    diff = Math.max(diff, Math.abs(actual[i] - expected[i]));
    update = Math.max(update, Math.abs(expected[i] - initial[i]));
  }
  return diff / Math.max(update, 1e-12);
}
