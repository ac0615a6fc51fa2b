import { closeSync, openSync, readSync, writeSync } from 'node:fs';
import { Unzip, UnzipInflate, Zip, ZipPassThrough } from 'fflate';

/**
 * The zip of a Keras 3 `.keras` archive, read and written in chunks (fflate's streaming zip): an
 * entry goes to a callback as it is read, so the weights file never sits in memory whole.
 */
const CHUNK = 1 << 20;

/**
 * Stream `file`'s entries: `sink(name)` returns where an entry's bytes go (or null to skip it).
 * `complete` collects the names of the entries read to their end (so far, should reading fail): an
 * entry cut off by a truncated file is not among them.
 */
export function readZipEntries(file: string, sink: (name: string) => ((chunk: Uint8Array) => void) | null, complete = new Set<string>()): Set<string> {
  const unzip = new Unzip((entry) => {
    const write = sink(entry.name);
    if (!write) return;
    entry.ondata = (err, chunk, final) => {
      if (err) throw new Error(`entry ${entry.name}: ${err.message}`);
      write(chunk);
      if (final) complete.add(entry.name);
    };
    entry.start();
  });
  unzip.register(UnzipInflate);
  const fd = openSync(file, 'r');
  try {
    const buffer = Buffer.alloc(CHUNK);
    for (;;) {
      const n = readSync(fd, buffer, 0, CHUNK, null);
      unzip.push(new Uint8Array(buffer.subarray(0, n)), n === 0);
      if (n === 0) break;
    }
  } finally {
    closeSync(fd);
  }
  return complete;
}

/** Write a stored (uncompressed, as Python's zipfile writes by default) zip of `entries` to `file`. */
export function writeZip(file: string, entries: Array<{ name: string; bytes?: Uint8Array; file?: string }>): void {
  const fd = openSync(file, 'w', 0o644);
  try {
    let failure: Error | null = null;
    const zip = new Zip((err, data) => {
      if (err) failure = err;
      else writeSync(fd, data);
    });
    for (const entry of entries) {
      const stream = new ZipPassThrough(entry.name);
      zip.add(stream);
      if (entry.bytes) stream.push(entry.bytes, true);
      else pushFile(entry.file!, stream);
    }
    zip.end();
    if (failure) throw failure;
  } finally {
    closeSync(fd);
  }
}

function pushFile(path: string, stream: ZipPassThrough): void {
  const fd = openSync(path, 'r');
  try {
    const buffer = Buffer.alloc(CHUNK);
    let last = false;
    while (!last) {
      const n = readSync(fd, buffer, 0, CHUNK, null);
      last = n < CHUNK;
      stream.push(new Uint8Array(buffer.subarray(0, n)), last);
    }
  } finally {
    closeSync(fd);
  }
}
