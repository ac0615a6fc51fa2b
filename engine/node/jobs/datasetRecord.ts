import { createHash } from 'node:crypto';
import { closeSync, existsSync, openSync, readdirSync, readSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, join, relative } from 'node:path';
import { MNIST_TEST, MNIST_TRAIN } from '../../data/mnistSplit.js';
import type { DatasetRecord } from '../../protocol/runs.js';
import { describeData, sampleCounts, type DataRef, type TrainingSetup } from '../../protocol/trainingSetup.js';
import { readRunRecord } from './runRecord.js';

/** Bytes read from each end of a file: enough to notice an edit, cheap for a 10 GB dataset. */
const EDGE_BYTES = 4096;
/** Files fingerprinted by content edges; beyond this many, by path and size only. */
const MAX_FINGERPRINTED = 20_000;

/**
 * Which data a run trains on, for job.json: its name, a description, sample counts, and a checksum of
 * the description (without where it lies, so a copy elsewhere matches) and of every file's relative
 * path, size and first and last 4 KiB — not of all the data. Data not on this machine (a deploy's
 * `~/…` on the host) is checksummed by its description alone, and `checksumOf` says so.
 */
export function datasetRecordOf(training: TrainingSetup | undefined): DatasetRecord {
  const data: DataRef = training?.data ?? { kind: 'mnist' };
  const counts = sampleCounts(training);
  const description = describeData(data);
  const hash = createHash('sha256');
  const { location, name, ...rest } = placeOf(data);
  hash.update(JSON.stringify(rest));
  let checksumOf: string;
  if (location === undefined) checksumOf = data.kind === 'mnist' ? 'the bundled digits (they travel with the agents)' : 'the description (generated data)';
  else if (!existsSync(location)) checksumOf = `the description only: ${location} is not on this machine`;
  else {
    const files = filesUnder(location);
    files.forEach((file, i) => fingerprint(hash, location, file, i < MAX_FINGERPRINTED));
    checksumOf = `the description and ${files.length} file${files.length === 1 ? '' : 's'} (path, size, first and last ${EDGE_BYTES / 1024} KiB${files.length > MAX_FINGERPRINTED ? `; path and size only beyond ${MAX_FINGERPRINTED}` : ''})`;
  }
  return { name, description, checksum: hash.digest('hex'), checksumOf, ...counts };
}

/** Where the data lies on disk (undefined: it has no files) and its name; the rest is what is hashed as its description. */
function placeOf(data: DataRef): { location?: string; name: string; [key: string]: unknown } {
  const local = (path: string) => (path.startsWith('~/') ? join(homedir(), path.slice(2)) : path);
  switch (data.kind) {
    case 'mnist':
      return { name: 'mnist', kind: 'mnist', train: MNIST_TRAIN, test: MNIST_TEST };
    case 'synthetic':
      return { name: 'synthetic', ...data };
    case 'npy': {
      const { dir, ...rest } = data;
      return { location: local(dir), name: basename(dir), ...rest };
    }
    case 'dataset': {
      const { source, ...described } = data.dataset;
      return { location: local(source), name: data.dataset.name ?? basename(source), ...described };
    }
  }
}

/** Every file under a folder (or the file itself), sorted, hidden entries skipped (caches, .DS_Store). */
function filesUnder(location: string): string[] {
  if (!statSync(location).isDirectory()) return [location];
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
      if (entry.name.startsWith('.')) continue;
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.isFile()) out.push(path);
    }
  };
  walk(location);
  return out;
}

function fingerprint(hash: ReturnType<typeof createHash>, root: string, file: string, edges: boolean): void {
  const size = statSync(file).size;
  hash.update(`\n${relative(root, file) || basename(file)}\t${size}\t`);
  if (!edges || size === 0) return;
  const fd = openSync(file, 'r');
  try {
    const head = Buffer.alloc(Math.min(EDGE_BYTES, size));
    readSync(fd, head, 0, head.length, 0);
    hash.update(head);
    if (size > EDGE_BYTES) {
      const tail = Buffer.alloc(Math.min(EDGE_BYTES, size - EDGE_BYTES));
      readSync(fd, tail, 0, tail.length, size - tail.length);
      hash.update(tail);
    }
  } finally {
    closeSync(fd);
  }
}

/** The record in a run folder's job.json, if it has one. */
export function readDatasetRecord(runDir: string): DatasetRecord | undefined {
  try {
    return readRunRecord(runDir).dataset;
  } catch {
    return undefined;
  }
}

/** One line for people: name, counts and the checksum's first 12 hex digits. */
export function datasetLine(d: DatasetRecord): string {
  return `dataset ${d.name}: ${d.trainSamples} training / ${d.validationSamples} validation samples, sha256 ${d.checksum.slice(0, 12)}… of ${d.checksumOf}`;
}
