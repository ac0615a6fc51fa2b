import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Worker } from 'node:worker_threads';
import type { ModelArrays } from '../../engine/data/modelArrays.js';
import type { UserDataRef } from '../../engine/wire/data/openUserData.js';
import type { RowLoader } from './prefetcher.js';

/** What the worker needs to open the agent's dataset exactly as the agent did. */
export interface DataSource {
  ref: UserDataRef;
  arrays: ModelArrays;
  seed: number;
}

/** Which split of the dataset a read is from: training rows, or the validation rows an evaluation reads. */
export type SplitName = 'train' | 'validation';

export interface WorkerRequest {
  id: number;
  split: SplitName;
  names: string[];
  indices: Uint32Array;
}

export type WorkerReply =
  | { id: number; rows: Float32Array }
  | { id: number; error: string }
  | { id: number; unavailable: string };

/** The worker's bundle beside the running agent bundle (dist/agent/), or null (running from sources). */
export function prefetchWorkerFile(): string | null {
  const beside = process.argv[1] ? join(dirname(process.argv[1]), 'prefetch-worker.cjs') : '';
  return beside && existsSync(beside) ? beside : null;
}

/** A worker's loader: reads the training split unless told another (an evaluation's validation rows). */
export interface RowWorker extends RowLoader {
  load(names: string[], indices: Uint32Array, split?: SplitName): Promise<Float32Array | null>;
}

/**
 * Rows read by a worker thread. Requests are answered in order; a read error rejects that request
 * with the reader's message. If the worker cannot run (it failed to start or to open the data), every
 * request resolves null and the agent reads in place, as without prefetch: slower, never wrong.
 */
export function workerLoader(file: string, source: DataSource, log: (line: string) => void = () => undefined): RowWorker {
  const waiting = new Map<number, { resolve: (rows: Float32Array | null) => void; reject: (err: Error) => void }>();
  let next = 0;
  let broken = false;
  const worker = new Worker(file, { workerData: source });
  worker.unref(); // an idle worker never keeps the agent alive; ref'd while requests wait
  const giveUp = (why: string) => {
    if (!broken) log(`prefetch worker unavailable (${why}); reading rows in place`);
    broken = true;
    for (const w of waiting.values()) w.resolve(null);
    waiting.clear();
    worker.unref();
  };
  worker.on('message', (reply: WorkerReply) => {
    const w = waiting.get(reply.id);
    if (!w) return;
    waiting.delete(reply.id);
    if (waiting.size === 0) worker.unref();
    if ('rows' in reply) w.resolve(reply.rows);
    else if ('error' in reply) w.reject(new Error(reply.error));
    else {
      w.resolve(null);
      giveUp(reply.unavailable);
    }
  });
  worker.on('error', (err) => giveUp(err.message));
  worker.on('exit', (code) => giveUp(`exited with code ${code}`));
  return {
    load(names, indices, split = 'train') {
      if (broken) return Promise.resolve(null);
      return new Promise((resolve, reject) => {
        const id = next++;
        waiting.set(id, { resolve, reject });
        worker.ref();
        worker.postMessage({ id, split, names, indices: Uint32Array.from(indices) } satisfies WorkerRequest);
      });
    },
    close() {
      broken = true;
      for (const w of waiting.values()) w.resolve(null);
      waiting.clear();
      void worker.terminate();
    },
  };
}
