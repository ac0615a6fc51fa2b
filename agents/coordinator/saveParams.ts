import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { bytesToFloats } from '../comm/frame.js';
import type { Message } from '../comm/frame.js';

export interface ParamIndexEntry {
  name: string;
  shape: number[];
  /** Offset in float32 elements into params.bin. */
  offset: number;
}

/**
 * Write the model's trained parameters, gathered from the first replica of every stage, as
 * `params.bin` (float32, little-endian) plus `params.json` (names, shapes, offsets). Each file is
 * written to a temporary name and renamed, so a reader never sees half a file.
 */
export function saveParams(dir: string, replies: Message[]): { index: ParamIndexEntry[]; bytes: number } {
  const parts = replies
    .filter((m) => Array.isArray(m.header.names))
    .sort((a, b) => Number(a.header.stage) - Number(b.header.stage));
  const index: ParamIndexEntry[] = [];
  const arrays: Float32Array[] = [];
  let offset = 0;
  for (const part of parts) {
    const values = bytesToFloats(part.payload);
    const names = part.header.names as string[];
    const shapes = part.header.shapes as number[][];
    let local = 0;
    names.forEach((name, i) => {
      const size = shapes[i].reduce((a, b) => a * b, 1);
      index.push({ name, shape: shapes[i], offset: offset + local });
      local += size;
    });
    arrays.push(values);
    offset += values.length;
  }
  const all = new Float32Array(offset);
  let at = 0;
  for (const a of arrays) {
    all.set(a, at);
    at += a.length;
  }
  mkdirSync(dir, { recursive: true });
  const write = (file: string, data: string | Uint8Array) => {
    const tmp = join(dir, `.${file}.tmp`);
    writeFileSync(tmp, data);
    renameSync(tmp, join(dir, file));
  };
  write('params.bin', new Uint8Array(all.buffer));
  write('params.json', JSON.stringify({ format: 'float32-le', parameters: index }, null, 1));
  return { index, bytes: all.byteLength };
}
