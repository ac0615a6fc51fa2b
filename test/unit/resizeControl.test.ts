import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { dispatchCall } from '../../electron/rpcDispatch.js';
import { parseAdd, parseRemove } from '../../engine/node/commands/resize.js';
import { readControlFile, removeControlFile, writeControlFile } from '../../engine/node/jobs/controlFile.js';
import { checkResize } from '../../engine/node/jobs/jobControl.js';
import type { JobEvent } from '../../engine/protocol/events.js';
import type { StudioApi } from '../../engine/protocol/studioApi.js';
import { applyEvents, emptyMetrics, type MembershipLine } from '../../renderer/src/store/metrics.js';
import { resizeBlocked } from '../../renderer/src/store/resizeState.js';

const dir = mkdtempSync(join(tmpdir(), 'shoal-control-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const agent = (rank: number, replica: number, virtualNodes: number, host = `local-${rank}`) => ({ rank, stage: 0, replica, shard: 0, host, pid: 100 + rank, virtualNodes });
const generation = (n: number, step: number, reason: string, agents: MembershipLine['agents']): MembershipLine => ({ type: 'membership', generation: n, step, reason, agents });

describe('shoal resize arguments', () => {
  it('reads --add local, local:N and host aliases with counts, and refuses bad counts and names', () => {
    expect(parseAdd(undefined)).toEqual([]);
    expect(parseAdd('local')).toEqual([{ host: 'local', count: 1 }]);
    expect(parseAdd('local:3')).toEqual([{ host: 'local', count: 3 }]);
    expect(parseAdd('gpu1:2, gpu-2.lab')).toEqual([
      { host: 'gpu1', count: 2 },
      { host: 'gpu-2.lab', count: 1 },
    ]);
    expect(() => parseAdd('local:0')).toThrow(/1 to 64/);
    expect(() => parseAdd('a b')).toThrow(/expected local\[:N\] or a host alias\[:N\]/);
    expect(() => parseAdd('gpu1:x')).toThrow(/expected local\[:N\] or a host alias/);
  });

  it('reads --remove as distinct ranks', () => {
    expect(parseRemove('2, 3,2')).toEqual([2, 3]);
    expect(() => parseRemove('-1')).toThrow(/non-negative whole numbers/);
  });
});

describe('resize requests are checked against the current generation', () => {
  const current = generation(2, 10, 'resize: +1', [agent(0, 0, 2), agent(1, 1, 2)]);
  it('accepts known ranks and additions, refuses unknown ranks, removing everyone, and nothing', () => {
    expect(() => checkResize('job-x', current, { remove: [1] })).not.toThrow();
    expect(() => checkResize('job-x', current, { add: 2 })).not.toThrow();
    expect(() => checkResize('job-x', current, { remove: [5] })).toThrow(/job-x has no rank 5; its ranks are 0, 1 \(generation 2\)/);
    expect(() => checkResize('job-x', current, { remove: [0, 1] })).toThrow(/without agents/);
    expect(() => checkResize('job-x', current, {})).toThrow(/Nothing to do/);
    expect(() => checkResize('job-x', undefined, { remove: [0] })).toThrow(/has not reported its agents yet/);
  });
});

describe('the control file', () => {
  it('is written mode 600, read back and removed', () => {
    writeControlFile(dir, { jobId: 'job-x', host: '127.0.0.1', port: 4242, secret: 'ab'.repeat(32), ownerPid: process.pid });
    expect(statSync(join(dir, 'control.json')).mode & 0o777).toBe(0o600);
    expect(readControlFile(dir)).toMatchObject({ jobId: 'job-x', port: 4242, ownerPid: process.pid });
    removeControlFile(dir);
    expect(readControlFile(dir)).toBeUndefined();
  });
});

describe('resizeJob over the studio wire', () => {
  const calls: unknown[] = [];
  const api = { resizeJob: async (jobId: string, request: unknown) => void calls.push([jobId, request]) } as unknown as StudioApi;
  it('passes a valid request and refuses malformed ones with a readable message', async () => {
    expect(await dispatchCall(api, { kind: 'call', id: 1, method: 'resizeJob', params: ['job-x', { add: 1 }] })).toEqual({ kind: 'result', id: 1, ok: true, value: null });
    expect(calls).toEqual([['job-x', { add: 1 }]]);
    const empty = await dispatchCall(api, { kind: 'call', id: 2, method: 'resizeJob', params: ['job-x', {}] });
    expect(empty).toMatchObject({ ok: false, error: expect.stringMatching(/adds agents or removes ranks/) });
    const negative = await dispatchCall(api, { kind: 'call', id: 3, method: 'resizeJob', params: ['job-x', { remove: [-1] }] });
    expect(negative).toMatchObject({ ok: false, error: expect.stringMatching(/Bad parameters for resizeJob/) });
  });
});

describe('the monitor folds membership events', () => {
  const events: JobEvent[] = [
    { type: 'agent', rank: 0, stage: 0, replica: 0, host: 'local-0', pid: 100, backend: 'wasm' },
    generation(1, 0, 'start', [agent(0, 0, 2)]),
    { type: 'step', step: 0, epoch: 0, loss: 2, samplesPerSec: 100, stepMs: 10, elapsedMs: 10 },
    generation(1, 3, 'rebalance by measured speed', [agent(0, 0, 2)]),
    generation(2, 5, 'resize: +1', [agent(0, 0, 1), agent(1, 1, 1, 'local-a0')]),
    generation(3, 9, 'lost rank 1 (local-a0)', [agent(0, 0, 2)]),
  ];
  it('keeps the current generation, marks only new generations after the first, and logs them', () => {
    const m = applyEvents(emptyMetrics(), events);
    expect(m.membership?.generation).toBe(3);
    expect(m.markers).toEqual([
      { step: 5, label: 'generation 2: resize: +1' },
      { step: 9, label: 'generation 3: lost rank 1 (local-a0)' },
    ]);
    expect(m.agents).toEqual([{ rank: 0, stage: 0, replica: 0, host: 'local-0', pid: 100, backend: 'wasm' }]);
    const lines = m.logs.map((l) => `${l.level} ${l.message}`);
    expect(lines).toEqual(['info Generation 2 from step 5 (resize: +1): 2 agents, virtual nodes [1, 1].', 'warn Generation 3 from step 9 (lost rank 1 (local-a0)): 1 agents, virtual nodes [2].']);
  });

  it('says why a job cannot be resized', () => {
    const running = { id: 'job-x', model: 'mlp', planLabel: 'p', agents: 1, metrics: applyEvents(emptyMetrics(), [{ type: 'status', state: 'running', time: 0 }, ...events]) };
    expect(resizeBlocked(running, false)).toBeUndefined();
    expect(resizeBlocked(running, true)).toMatch(/on its way/);
    expect(resizeBlocked({ ...running, schedule: 'async' }, false)).toMatch(/asynchronous pipeline cannot be resized/);
    expect(resizeBlocked({ ...running, metrics: { ...running.metrics, state: 'finished' } }, false)).toMatch(/not running/);
    expect(resizeBlocked(undefined, false)).toMatch(/No job/);
  });
});
