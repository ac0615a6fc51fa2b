/**
 * The one pass over a text data file (CSV/TSV or JSON Lines) that finds where every record starts and
 * ends, so agents later read just the records of their samples by byte offset, and gathers the facts a
 * reader checks against the model (per-column stats). The result is cached beside the file
 * (`<file>.shoal-index.json`, or under the temp folder when that is not writable) with the file's
 * size, mtime and a checksum of its first and last 64 KiB; a changed file is indexed again.
 */
import { createHash } from 'node:crypto';
import { closeSync, fstatSync, mkdirSync, openSync, readFileSync, readSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';

const CHUNK = 1 << 20;
const EDGE = 1 << 16;
const VERSION = 1;

export interface RecordIndex<S> {
  /** Record r spans bytes [spans[2r], spans[2r+1]) (line ending and BOM excluded). Blank lines are not records. */
  spans: Float64Array;
  count: number;
  stats: S;
  /** sha256 of the whole file, as indexed. */
  sha256: string;
  /** Whether it came from the cache. */
  cached: boolean;
}

export interface RecordVisitor<S> {
  /** Called once per record, in file order; `index` counts records (0 = the first, e.g. a header), `line` the file's lines (1-based, blank ones included; for CSV a quoted line break starts no new line). */
  record(bytes: Buffer, index: number, line: number): void;
  finish(): S;
}

interface CacheFile { version: number; kind: string; key: string; size: number; mtimeMs: number; edges: string; sha256: string; count: number; spans: string; stats: unknown }

function edgesChecksum(fd: number, size: number): string {
  const hash = createHash('sha256');
  const buf = Buffer.alloc(Math.min(EDGE, size));
  readSync(fd, buf, 0, buf.length, 0);
  hash.update(buf);
  if (size > EDGE) {
    readSync(fd, buf, 0, buf.length, size - buf.length);
    hash.update(buf);
  }
  return hash.digest('hex');
}

function cachePaths(path: string): string[] {
  return [`${path}.shoal-index.json`, join(tmpdir(), 'shoal-index', `${createHash('sha1').update(path).digest('hex').slice(0, 16)}-${basename(path)}.json`)];
}

/**
 * Index `path` (records split at newlines; with `quoted`, newlines inside "…" do not end a record, as
 * RFC 4180 allows) or load the cached index. `key` names what the visitor computes, so a changed
 * reader never trusts an old cache.
 */
export function indexRecords<S>(path: string, kind: 'csv' | 'lines', key: string, visitor: () => RecordVisitor<S>): RecordIndex<S> {
  const fd = openSync(path, 'r');
  try {
    const { size, mtimeMs } = fstatSync(fd);
    const edges = edgesChecksum(fd, size);
    for (const cache of cachePaths(path)) {
      try {
        const c = JSON.parse(readFileSync(cache, 'utf8')) as CacheFile;
        if (c.version === VERSION && c.kind === kind && c.key === key && c.size === size && c.mtimeMs === mtimeMs && c.edges === edges) {
          const bytes = Buffer.from(c.spans, 'base64');
          const spans = new Float64Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
          return { spans, count: c.count, stats: c.stats as S, sha256: c.sha256, cached: true };
        }
      } catch { /* no cache, or an unreadable one: index again */ }
    }
    const built = scan(fd, size, path, kind === 'csv', visitor());
    const file: CacheFile = { version: VERSION, kind, key, size, mtimeMs, edges, sha256: built.sha256, count: built.count, spans: Buffer.from(built.spans.buffer, built.spans.byteOffset, built.spans.byteLength).toString('base64'), stats: built.stats };
    const text = JSON.stringify(file);
    for (const cache of cachePaths(path)) {
      try {
        mkdirSync(join(cache, '..'), { recursive: true });
        const tmp = `${cache}.${process.pid}.tmp`;
        writeFileSync(tmp, text);
        renameSync(tmp, cache); // atomic: agents opening the same file at once never see half an index
        break;
      } catch { /* read-only folder: try the next place; without any, the index lives for this run */ }
    }
    return { ...built, cached: false };
  } finally {
    closeSync(fd);
  }
}

function scan<S>(fd: number, size: number, path: string, quoted: boolean, visitor: RecordVisitor<S>): Omit<RecordIndex<S>, 'cached'> {
  const hash = createHash('sha256');
  const buf = Buffer.alloc(CHUNK);
  let spans = new Float64Array(1024);
  let count = 0;
  let pending: Buffer[] = [];
  let recStart = 0;
  let inQuotes = false;
  let quoteRecord = 0;
  let line = 0;
  const emit = (start: number, end: number, bytes: Buffer) => {
    line++;
    if (start === 0 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) { bytes = bytes.subarray(3); start += 3; }
    if (bytes.length && bytes[bytes.length - 1] === 0x0d) { bytes = bytes.subarray(0, -1); end--; }
    if (bytes.every((b) => b === 0x20 || b === 0x09)) return; // blank line
    if (2 * count + 2 > spans.length) { const grown = new Float64Array(spans.length * 2); grown.set(spans); spans = grown; }
    spans[2 * count] = start;
    spans[2 * count + 1] = end;
    visitor.record(bytes, count++, line);
  };
  for (let pos = 0; pos < size; ) {
    const n = readSync(fd, buf, 0, Math.min(CHUNK, size - pos), pos);
    if (n === 0) throw new Error(`${path}: the file shrank while it was being indexed; was it being written? Try again once it is complete.`);
    hash.update(buf.subarray(0, n));
    let segStart = 0;
    for (let i = 0; i < n; i++) {
      const b = buf[i];
      if (quoted && b === 0x22) {
        if (!inQuotes) quoteRecord = count;
        inQuotes = !inQuotes;
      } else if (b === 0x0a && !inQuotes) {
        const piece = buf.subarray(segStart, i);
        emit(recStart, pos + i, pending.length ? Buffer.concat([...pending, piece]) : Buffer.from(piece));
        pending = [];
        segStart = i + 1;
        recStart = pos + i + 1;
      }
    }
    if (segStart < n) pending.push(Buffer.from(buf.subarray(segStart, n)));
    pos += n;
  }
  if (inQuotes) throw new Error(`${path}: a quoted field opened in record ${quoteRecord + 1} is never closed (a missing " ). Fix the quoting; spreadsheet programs write "" for a quote inside a field.`);
  if (pending.length) emit(recStart, size, Buffer.concat(pending));
  return { spans: spans.slice(0, 2 * count), count, stats: visitor.finish(), sha256: hash.digest('hex') };
}

/** Read records by index: consecutive records in one positional read. */
export function recordReader(path: string, spans: Float64Array): { read(records: ArrayLike<number>, each: (bytes: Buffer, r: number) => void): void; close(): void } {
  const fd = openSync(path, 'r');
  let open = true;
  return {
    read(records, each) {
      if (!open) throw new Error(`${path}: read after close().`);
      for (let r = 0; r < records.length; ) {
        let run = 1;
        while (r + run < records.length && records[r + run] === records[r] + run && run < 256) run++;
        const start = spans[2 * records[r]], end = spans[2 * (records[r] + run - 1) + 1];
        const bytes = Buffer.alloc(end - start);
        let got = 0;
        while (got < bytes.length) {
          const n = readSync(fd, bytes, got, bytes.length - got, start + got);
          if (n === 0) throw new Error(`${path}: ends before record ${records[r] + 1} (did the file change under the run?). Fix it; the run resumes from its checkpoint.`);
          got += n;
        }
        for (let k = 0; k < run; k++) each(bytes.subarray(spans[2 * (records[r] + k)] - start, spans[2 * (records[r] + k) + 1] - start), r + k);
        r += run;
      }
    },
    close() { if (open) closeSync(fd); open = false; },
  };
}
