import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** Read the parameters a job wrote with --out: name → values. */
export function readParams(dir: string): Map<string, Float32Array> {
  const index = JSON.parse(readFileSync(join(dir, 'params.json'), 'utf8')) as { parameters: Array<{ name: string; shape: number[]; offset: number }> };
  const bin = readFileSync(join(dir, 'params.bin'));
  const all = new Float32Array(bin.buffer.slice(bin.byteOffset, bin.byteOffset + bin.byteLength));
  const out = new Map<string, Float32Array>();
  for (const p of index.parameters) {
    const size = p.shape.reduce((a, b) => a * b, 1);
    out.set(p.name, all.slice(p.offset, p.offset + size));
  }
  return out;
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
