import { createHash } from 'node:crypto';
import { closeSync, mkdirSync, openSync, readFileSync, readSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';

/**
 * A cheap content digest for files of any size: sha256 of the size, the first MiB and the last MiB.
 * Hashing a 10 GB dataset on every deploy would take minutes; this reads at most 2 MiB per file. It is
 * cached here by (path, size, mtime), so an unchanged file is not even opened again. What it cannot see:
 * a change in the middle of a file bigger than 2 MiB that keeps its size, or (with the cache) any change
 * that keeps size and mtime — the README says so. The same digest is computed on hosts (DIGEST_JS) to
 * verify an upload and to compare data that already sits on every host.
 */

const EDGE = 1024 * 1024;

export interface FileDigest {
  bytes: number;
  digest: string;
}

/** The digest of one file, read now (no cache). */
export function digestFile(path: string): FileDigest {
  const fd = openSync(path, 'r');
  try {
    const bytes = statSync(path).size;
    const hash = createHash('sha256').update(`${bytes}\0`);
    const head = Buffer.alloc(Math.min(EDGE, bytes));
    readSync(fd, head, 0, head.length, 0);
    hash.update(head);
    if (bytes > EDGE) {
      const tail = Buffer.alloc(Math.min(EDGE, bytes - EDGE));
      readSync(fd, tail, 0, tail.length, bytes - tail.length);
      hash.update(tail);
    }
    return { bytes, digest: hash.digest('hex').slice(0, 32) };
  } finally {
    closeSync(fd);
  }
}

interface CacheEntry {
  bytes: number;
  mtimeMs: number;
  digest: string;
}

/** Where digests are remembered: $XDG_CACHE_HOME/shoal (else ~/.cache/shoal). */
function cacheFile(): string {
  const xdg = process.env.XDG_CACHE_HOME;
  return join(xdg && xdg.startsWith('/') ? xdg : join(homedir(), '.cache'), 'shoal', 'file-digests.json');
}

/**
 * Digests of many files (absolute paths), from the cache where size and mtime are unchanged. The cache
 * is rewritten atomically; when it cannot be written (read-only home) the digests are simply recomputed
 * next time.
 */
export function digestFiles(paths: readonly string[]): FileDigest[] {
  const file = cacheFile();
  let cache: Record<string, CacheEntry> = {};
  try {
    cache = JSON.parse(readFileSync(file, 'utf8')) as Record<string, CacheEntry>;
  } catch {
    // No cache yet, or a damaged one: start afresh.
  }
  let changed = false;
  const out = paths.map((path) => {
    const st = statSync(path);
    const hit = cache[path];
    if (hit && hit.bytes === st.size && hit.mtimeMs === st.mtimeMs) return { bytes: hit.bytes, digest: hit.digest };
    const d = digestFile(path);
    cache[path] = { ...d, mtimeMs: st.mtimeMs };
    changed = true;
    return d;
  });
  if (changed) {
    try {
      mkdirSync(dirname(file), { recursive: true });
      const tmp = `${file}.${process.pid}.tmp`;
      writeFileSync(tmp, JSON.stringify(cache));
      renameSync(tmp, file);
    } catch {
      // Not writable: the cache is an optimisation only.
    }
  }
  return out;
}

/**
 * The same digest as a Node program for a host (`node -` reads it on stdin): for each path relative to
 * `root` (`~/…` is the host's home) it prints a JSON line `{ "rel", "bytes", "digest" }`, or
 * `{ "rel", "error" }` with the system's code (ENOENT, EACCES, EISDIR …) when the file cannot be read.
 */
export function digestScript(root: string, relatives: readonly string[]): string {
  return `
const fs = require('fs'), path = require('path'), os = require('os'), crypto = require('crypto');
const root = ${JSON.stringify(root)}.replace(/^~(?=\\/|$)/, os.homedir());
const EDGE = ${EDGE};
for (const rel of ${JSON.stringify(relatives)}) {
  try {
    const p = rel ? path.join(root, rel) : root;
    const fd = fs.openSync(p, 'r');
    try {
      const bytes = fs.fstatSync(fd).size;
      const hash = crypto.createHash('sha256').update(bytes + '\\0');
      const head = Buffer.alloc(Math.min(EDGE, bytes));
      fs.readSync(fd, head, 0, head.length, 0);
      hash.update(head);
      if (bytes > EDGE) {
        const tail = Buffer.alloc(Math.min(EDGE, bytes - EDGE));
        fs.readSync(fd, tail, 0, tail.length, bytes - tail.length);
        hash.update(tail);
      }
      process.stdout.write(JSON.stringify({ rel, bytes, digest: hash.digest('hex').slice(0, 32) }) + '\\n');
    } finally {
      fs.closeSync(fd);
    }
  } catch (err) {
    process.stdout.write(JSON.stringify({ rel, error: err.code || String(err.message) }) + '\\n');
  }
}
`;
}

export type RemoteDigest = { rel: string } & ({ bytes: number; digest: string } | { error: string });

/** The JSON lines of digestScript, by relative path. */
export function parseDigestLines(stdout: string): Map<string, RemoteDigest> {
  const out = new Map<string, RemoteDigest>();
  for (const line of stdout.split('\n')) {
    if (!line.startsWith('{')) continue;
    try {
      const d = JSON.parse(line) as RemoteDigest;
      out.set(d.rel, d);
    } catch {
      // A line cut by a lost connection: that file counts as not reported.
    }
  }
  return out;
}
