/**
 * The prefetch worker thread (bundled as dist/agent/prefetch-worker.cjs, beside the agent): opens the
 * same dataset the agent opened (same reference, model arrays and seed, so the same files, splits and
 * preprocessing) and answers gathers of rows of either split (training steps' and evaluations'), so
 * reading and decoding run beside the agent's compute instead of before it. Rows travel back as transferred buffers (no copy).
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { Dataset } from '../../engine/wire/data/dataset.js';
import { openUserData } from '../../engine/wire/data/openUserData.js';
import type { DataSource, WorkerReply, WorkerRequest } from './rowWorker.js';

const port = parentPort;
if (port) {
  const source = workerData as DataSource;
  let dataset: Dataset | null = null;
  let unavailable = '';
  try {
    dataset = openUserData(source.ref, source.arrays, source.seed);
  } catch (err) {
    unavailable = (err as Error).message;
  }
  port.on('message', ({ id, split, names, indices }: WorkerRequest) => {
    let reply: WorkerReply;
    if (!dataset) reply = { id, unavailable };
    else {
      try {
        const rows = dataset[split].gather(names, indices);
        port.postMessage({ id, rows } satisfies WorkerReply, [rows.buffer as ArrayBuffer]);
        return;
      } catch (err) {
        reply = { id, error: (err as Error).message };
      }
    }
    port.postMessage(reply);
  });
  port.on('close', () => dataset?.close());
}
