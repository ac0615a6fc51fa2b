import { createHash } from 'node:crypto';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runPeerWorkers } from '../support/peerWorkers.js';

const WORKER = join(dirname(fileURLToPath(import.meta.url)), 'collectivesWorker.ts');

/** Run `procs` worker processes through a scenario; returns each rank's result line. */
const run = (procs: number, scenario: string) => runPeerWorkers<Record<string, unknown>>(WORKER, procs, scenario, {});

describe('collectives across real processes', () => {
  it('3 processes agree bit for bit on all-reduce, reduce-scatter, all-gather and broadcast', async () => {
    const results = await run(3, 'correct');
    expect(results.map((r) => r.error)).toEqual([undefined, undefined, undefined]);
    const first = results[0];
    for (const r of results) {
      expect(r.allReduced).toEqual(first.allReduced);
      expect(r.ownedValues).toEqual([6]); // 1 + 2 + 3
      expect(r.gatheredValues).toEqual([6]);
    }
    // The last element is ((1000·k + 999) mod 1000 + rank)·0.001 summed over ranks 0..2.
    expect((first.allReduced as { last: number }).last).toBeCloseTo(0.001 * (3 * ((((8 << 20) / 4) % 1000)) + 3), 4);
    const ramp = Float32Array.from({ length: 300_000 }, (_, i) => i);
    const rampDigest = createHash('sha256').update(new Uint8Array(ramp.buffer)).digest('hex');
    for (const r of results) expect(r.broadcast).toBe(rampDigest);
  });

  it('a process that dies makes the others fail fast, naming its rank', async () => {
    const results = await run(3, 'die');
    // "failed …" naming the dead rank, not "timed out after 60 s": the lost link failed the collective.
    for (const r of results.slice(0, 2)) {
      expect(r.error).toMatch(/^rank [01]: all-reduce s5\/allreduce failed.*rank 2 \(127\.0\.0\.1:\d+\)/);
    }
  });
});
