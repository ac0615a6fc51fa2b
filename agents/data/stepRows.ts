import { appendFileSync } from 'node:fs';
import type { Dataset } from '../../engine/wire/data/dataset.js';
import { RowPrefetcher, type RowLoader, type RowRead } from './prefetcher.js';
import { type DataSource, prefetchWorkerFile, type RowWorker, type SplitName, workerLoader } from './rowWorker.js';

/**
 * Which agent-side dataset came from which user data (set by openDataset), so a prefetch worker can
 * open the same one. The bundled digits are not here: they are in memory already.
 */
const sources = new WeakMap<Dataset, DataSource>();

/** A dataset's rows as the agent reads them: training steps' and evaluations', through one worker thread. */
interface DatasetRows {
  train: RowPrefetcher;
  validation: RowPrefetcher;
  close(): void;
}
const readers = new WeakMap<Dataset, DatasetRows>();
let current: DatasetRows | null = null;

export function rememberSource(dataset: Dataset, source: DataSource): void {
  sources.set(dataset, source);
}

/**
 * The rows of a dataset, through prefetchers: with a worker thread when the data is the user's, the
 * worker's bundle is beside the agent's and SHOAL_PREFETCH is not 'off'; else read in place. Both
 * splits share the one worker, whose requests are answered in order. Closing the dataset stops it.
 */
function rowsOf(dataset: Dataset): DatasetRows {
  const known = readers.get(dataset);
  if (known) return known;
  const source = sources.get(dataset);
  const file = process.env.SHOAL_PREFETCH === 'off' ? null : prefetchWorkerFile();
  const log = (line: string) => process.stderr.write(`[agent pid ${process.pid}] ${line}\n`);
  // The worker starts at the first read ahead (never on a stage that reads no data).
  let worker: RowWorker | null = null;
  let closed = false;
  // A prefetcher closing (dropping what it holds) leaves the worker to the other split; the dataset's close ends it.
  const loaderOf = (split: SplitName): RowLoader => ({
    load: (names, indices) => (closed ? Promise.resolve(null) : (worker ??= workerLoader(file!, source!, log)).load(names, indices, split)),
    close: () => undefined,
  });
  const reads = source && file;
  const fresh: DatasetRows = {
    train: new RowPrefetcher(dataset.train, reads ? loaderOf('train') : null),
    validation: new RowPrefetcher(dataset.validation, reads ? loaderOf('validation') : null),
    close() {
      closed = true;
      this.train.close();
      this.validation.close();
      worker?.close();
    },
  };
  // One training context at a time: a rebuilt one (a resize, a new generation) ends the previous worker.
  if (current && current !== fresh) current.close();
  current = fresh;
  const close = dataset.close.bind(dataset);
  dataset.close = () => {
    fresh.close();
    close();
  };
  readers.set(dataset, fresh);
  return fresh;
}

/** The training rows of a dataset (training steps read them ahead, see beginStep). */
export function trainingRows(dataset: Dataset): RowPrefetcher {
  return rowsOf(dataset).train;
}

/** The validation rows of a dataset (an evaluation reads its next chunk ahead). */
export function validationRows(dataset: Dataset): RowPrefetcher {
  return rowsOf(dataset).validation;
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

/**
 * An evaluation ended on this agent (a stage that reads data). With SHOAL_EVAL_STATS set to a file,
 * one JSON line: its time here, the time spent waiting for rows, and how many of its reads the worker
 * served (hits) or were read in place (misses). A file apart from SHOAL_DATA_STATS, whose lines are steps.
 */
export function evaluationDone(rows: RowPrefetcher, evalId: number, before: { hits: number; misses: number; at: number }, waitMs: number): void {
  const stats = process.env.SHOAL_EVAL_STATS;
  if (!stats) return;
  const line = { pid: process.pid, evalId, evalMs: performance.now() - before.at, waitMs, hits: rows.hits - before.hits, misses: rows.misses - before.misses, maxRssKb: process.resourceUsage().maxRSS };
  appendFileSync(stats, `${JSON.stringify(line)}\n`);
}
