import { appendFileSync } from 'node:fs';
import type { Dataset } from '../../engine/wire/data/dataset.js';
import { RowPrefetcher, type RowLoader, type RowRead } from './prefetcher.js';
import { type DataSource, prefetchWorkerFile, workerLoader } from './rowWorker.js';

/**
 * Which agent-side dataset came from which user data (set by openDataset), so a prefetch worker can
 * open the same one. The bundled digits are not here: they are in memory already.
 */
const sources = new WeakMap<Dataset, DataSource>();
const prefetchers = new WeakMap<Dataset, RowPrefetcher>();
let current: RowPrefetcher | null = null;

export function rememberSource(dataset: Dataset, source: DataSource): void {
  sources.set(dataset, source);
}

/**
 * The training rows of a dataset, through a prefetcher: with a worker thread when the data is the
 * user's, the worker's bundle is beside the agent's and SHOAL_PREFETCH is not 'off'; else read in place.
 * Closing the dataset stops its worker.
 */
export function trainingRows(dataset: Dataset): RowPrefetcher {
  const known = prefetchers.get(dataset);
  if (known) return known;
  const source = sources.get(dataset);
  const file = process.env.SHOAL_PREFETCH === 'off' ? null : prefetchWorkerFile();
  const log = (line: string) => process.stderr.write(`[agent pid ${process.pid}] ${line}\n`);
  // The worker starts at the first read ahead (never on a stage that reads no data).
  let worker: RowLoader | null = null;
  let closed = false;
  const lazy: RowLoader = {
    load: (names, indices) => (closed ? Promise.resolve(null) : (worker ??= workerLoader(file!, source!, log)).load(names, indices)),
    close: () => {
      closed = true;
      worker?.close();
    },
  };
  const fresh = new RowPrefetcher(dataset.train, source && file ? lazy : null);
  // One training context at a time: a rebuilt one (a resize, a new generation) ends the previous worker.
  if (current && current !== fresh) current.close();
  current = fresh;
  const close = dataset.close.bind(dataset);
  dataset.close = () => {
    fresh.close();
    close();
  };
  prefetchers.set(dataset, fresh);
  return fresh;
}

let last: { step: number; at: number; hits: number; misses: number } | null = null;

/**
 * Step `step` begins on this agent: prefetch its reads and the next step's. With SHOAL_DATA_STATS
 * set to a file (the data benchmark), one JSON line per finished step: its time, the time spent
 * waiting for rows, and the process's peak resident memory.
 */
export function beginStep(rows: RowPrefetcher, step: number, readsOf: (step: number) => RowRead[]): void {
  const stats = process.env.SHOAL_DATA_STATS;
  if (stats) {
    const now = performance.now();
    if (last && last.step === step - 1) {
      const line = { pid: process.pid, step: last.step, stepMs: now - last.at, waitMs: rows.waitMs, hits: rows.hits - last.hits, misses: rows.misses - last.misses, maxRssKb: process.resourceUsage().maxRSS };
      appendFileSync(stats, `${JSON.stringify(line)}\n`);
    }
    last = { step, at: now, hits: rows.hits, misses: rows.misses };
  }
  rows.plan(step, readsOf);
}
