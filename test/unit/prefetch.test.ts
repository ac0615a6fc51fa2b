import { build } from 'esbuild';
import { mkdtempSync, rmSync, truncateSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RowPrefetcher, type RowLoader, type RowRead } from '../../agents/data/prefetcher.js';
import { type DataSource, workerLoader } from '../../agents/data/rowWorker.js';
import { globalBatchIndices, sliceBounds, stepsPerEpoch } from '../../engine/data/dataOrder.js';
import type { ModelArrays } from '../../engine/data/modelArrays.js';
import type { Dataset } from '../../engine/wire/data/dataset.js';
import { writeNpy } from '../../engine/wire/data/npy.js';
import { openUserData } from '../../engine/wire/data/openUserData.js';

/**
 * The prefetcher (agents/data/prefetcher.ts) reads rows ahead in a worker thread; what it returns must
 * be exactly what the agent's own gather returns, for every read of a run of steps — across an epoch
 * boundary and after the batch plan changes — and a read that fails must fail the take with the
 * reader's message (file and rows).
 */
const N = 50;
const F = 7;
let root: string;
let workerFile: string;

const arrays: ModelArrays = {
  inputs: [{ name: 'x', shape: [F], dtype: 'float32' }],
  targets: [{ name: 'y', shape: [], dtype: 'int32', range: [0, 4] }],
} as unknown as ModelArrays;

function makeData(dir: string): DataSource {
  const x = Float32Array.from({ length: N * F }, (_, i) => Math.sin(i) * 10 + i / 7);
  const y = Int32Array.from({ length: N }, (_, i) => (i * 3) % 5);
  writeNpy(join(dir, 'x.npy'), x, [N, F]);
  writeNpy(join(dir, 'y.npy'), y, [N]);
  return { ref: { kind: 'npy', dir, validationSplit: 0.2 }, arrays, seed: 11 };
}

/** The reads of a one-stage agent (inputs and targets) for one step under a batch plan, as pipelineStep makes them. */
function readsOf(train: number, plan: { globalBatch: number; microBatches: number }) {
  return (step: number): RowRead[] => {
    const all = globalBatchIndices(11, step, plan.globalBatch, train, true);
    return Array.from({ length: plan.microBatches }, (_, m) => all.subarray(...sliceBounds(all.length, plan.microBatches, m))).flatMap((indices) => [
      { names: ['x'], indices },
      { names: ['y'], indices },
    ]);
  };
}

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'shoal-prefetch-'));
  workerFile = join(root, 'prefetch-worker.cjs');
  await build({
    entryPoints: ['agents/data/prefetchWorker.ts'], outfile: workerFile, bundle: true, platform: 'node', format: 'cjs',
    target: 'node20', mainFields: ['module', 'main'], logLevel: 'warning',
  });
}, 60_000);
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('RowPrefetcher', () => {
  it('returns exactly the rows of the direct gather over steps, an epoch boundary and a changed batch plan, holding at most two steps', async () => {
    const dir = mkdtempSync(join(root, 'same-'));
    const source = makeData(dir);
    const dataset: Dataset = openUserData(source.ref, source.arrays, source.seed);
    const rows = new RowPrefetcher(dataset.train, workerLoader(workerFile, source));
    const size = dataset.train.size;
    const plans = [{ globalBatch: 8, microBatches: 2 }, { globalBatch: 12, microBatches: 3 }];
    const perEpoch = stepsPerEpoch(size, plans[0].globalBatch);
    for (let step = 0; step < 2 * perEpoch + 3; step++) {
      // The plan changes mid-run (a resize with another global batch): reads prefetched for the old plan are never used.
      const plan = step < perEpoch + 2 ? plans[0] : plans[1];
      const reads = readsOf(size, plan);
      // At the change the prefetcher was told the old plan (as if it changed after the step began): misses, never other rows.
      rows.plan(step, step === perEpoch + 2 ? readsOf(size, plans[0]) : reads);
      expect(rows.held).toBeLessThanOrEqual(2 * 2 * plans[1].microBatches);
      for (const r of reads(step)) {
        const got = await rows.take(r.names, r.indices);
        expect(Array.from(got)).toEqual(Array.from(dataset.train.gather(r.names, r.indices)));
      }
    }
    expect(rows.misses).toBe(2 * plans[1].microBatches); // the changed step's reads
    expect(rows.hits).toBeGreaterThan(2 * 2 * 2 * perEpoch); // every other read came from the worker
    rows.close();
    dataset.close();
  });

  it('fails the take with the reader\'s message when a file changes under the run, and drops unasked failures silently', async () => {
    const dir = mkdtempSync(join(root, 'cut-'));
    const source = makeData(dir);
    const dataset = openUserData(source.ref, source.arrays, source.seed);
    const rows = new RowPrefetcher(dataset.train, workerLoader(workerFile, source));
    const reads = readsOf(dataset.train.size, { globalBatch: 8, microBatches: 2 });
    rows.plan(0, reads);
    for (const r of reads(0)) await rows.take(r.names, r.indices); // the worker has the files open
    truncateSync(join(dir, 'x.npy'), 200); // the file is cut short under the running job
    const unhandled: unknown[] = [];
    const onUnhandled = (err: unknown) => unhandled.push(err);
    process.on('unhandledRejection', onUnhandled);
    // Step 1 was read ahead before the cut; steps 3 and 4 are read after it.
    rows.plan(3, reads);
    const first = reads(3)[0];
    await expect(rows.take(first.names, first.indices)).rejects.toThrow(/x\.npy: truncated while reading rows/);
    rows.plan(7, reads); // the failed reads of steps 3 and 4 nobody asked for are dropped
    await new Promise((r) => setTimeout(r, 200));
    process.off('unhandledRejection', onUnhandled);
    expect(unhandled).toEqual([]);
    // Without a worker the same failure comes from the agent's own read.
    const inPlace = new RowPrefetcher(dataset.train, null);
    await expect(inPlace.take(first.names, first.indices)).rejects.toThrow(/x\.npy: truncated while reading rows/);
    rows.close();
    dataset.close();
  });

  it('reads in place when the worker cannot open the data', async () => {
    const dir = mkdtempSync(join(root, 'gone-'));
    const source = makeData(dir);
    const dataset = openUserData(source.ref, source.arrays, source.seed);
    const broken: RowLoader = workerLoader(workerFile, { ...source, ref: { kind: 'npy', dir: join(dir, 'missing') } });
    const rows = new RowPrefetcher(dataset.train, broken);
    const reads = readsOf(dataset.train.size, { globalBatch: 8, microBatches: 2 });
    rows.plan(0, reads);
    for (const r of reads(0)) expect(Array.from(await rows.take(r.names, r.indices))).toEqual(Array.from(dataset.train.gather(r.names, r.indices)));
    expect(rows.hits).toBe(0);
    rows.close();
    dataset.close();
  });
});
