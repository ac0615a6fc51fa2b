import { afterEach, describe, expect, it } from 'vitest';
import { createStudioService, type StudioService } from '../../engine/node/api.js';
import { zooModel } from '../../engine/model/zoo.js';
import { presetPlan } from '../../engine/plan/presets.js';
import type { JobEvent } from '../../engine/protocol/events.js';
import { dispatchCall } from '../../electron/rpcDispatch.js';

let service: StudioService | null = null;
afterEach(async () => {
  await service?.close();
  service = null;
});

function collect(svc: StudioService): { events: JobEvent[]; indices: number[]; until: (pred: (e: JobEvent) => boolean) => Promise<JobEvent> } {
  const events: JobEvent[] = [];
  const indices: number[] = [];
  const waiters: Array<{ pred: (e: JobEvent) => boolean; resolve: (e: JobEvent) => void }> = [];
  svc.onJobEvent((_, { index, event }) => {
    events.push(event);
    indices.push(index);
    for (const w of waiters.filter((w) => w.pred(event))) w.resolve(event);
  });
  return { events, indices, until: (pred) => new Promise((resolve) => waiters.push({ pred, resolve })) };
}

describe('studio service (the API both shells expose)', () => {
  it('trains a job, streams events and back-fills them on request', async () => {
    service = createStudioService({ shell: 'web' });
    const info = await service.info();
    expect(info.defaultAgents).toBeGreaterThanOrEqual(2);
    const stream = collect(service);
    const plan = presetPlan(zooModel('mlp'), 'pp2-dp1');
    const { jobId } = await service.startTraining({ plan, agents: 2, steps: 30 });
    const final = await stream.until((e) => e.type === 'final');
    expect(final.type === 'final' && final.validationAccuracy).toBeGreaterThan(0.5);
    const backfill = await service.jobEvents(jobId, 0);
    expect(backfill.filter((e) => e.event.type === 'step')).toHaveLength(30);
    // Every event carries its index in the job's history: live and back-filled agree on it.
    expect(stream.indices).toEqual(stream.events.map((_, i) => i));
    expect(backfill.map((e) => e.index)).toEqual(backfill.map((_, i) => i));
    expect(backfill.slice(0, stream.events.length).map((e) => e.event)).toEqual(stream.events);
    expect((await service.jobEvents(jobId, 5))[0]).toEqual(backfill[5]);
    expect((await service.listJobs())[0]).toMatchObject({ id: jobId, model: 'mlp', agents: 2 });
  });

  it('rejects a malformed request with the field at fault, at the boundary', async () => {
    service = createStudioService({ shell: 'web' });
    const bad = await dispatchCall(service, { kind: 'call', id: 1, method: 'startTraining', params: [{ plan: { version: 1 }, agents: 2 }] });
    expect(bad).toMatchObject({ ok: false, error: expect.stringMatching(/^Bad parameters for startTraining: 0\.plan\.model: /) });
  });

  /** Start a long job, send `signal` to rank `rank` once it trains, and return the failure message. */
  /** Signal one agent of a running job; the job's failure message, and whether that agent is gone once the studio closed. */
  async function failureAfter(rank: number, signal: NodeJS.Signals): Promise<{ message: string; goneAfterClose: boolean }> {
    service = createStudioService({ shell: 'web' });
    const stream = collect(service);
    await service.startTraining({ plan: presetPlan(zooModel('mlp'), 'pp2-dp1'), agents: 2, steps: 100_000 });
    const agent = await stream.until((e) => e.type === 'agent' && e.rank === rank);
    const pid = agent.type === 'agent' ? agent.pid : 0;
    await stream.until((e) => e.type === 'step' && e.step >= 3);
    process.kill(pid, signal);
    const failed = await stream.until((e) => e.type === 'status' && e.state === 'failed');
    await service.close();
    service = null;
    return { message: failed.type === 'status' ? (failed.message ?? '') : '', goneAfterClose: !isAlive(pid) };
  }

  /** Whether a process exists (signal 0 checks without signalling). */
  function isAlive(pid: number): boolean {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  }

  it('a killed agent fails the job with a message naming its rank and host', async () => {
    const { message } = await failureAfter(1, 'SIGKILL');
    expect(message).toMatch(/rank 1 on local-\d \(pid \d+\) (disconnected|was killed by SIGKILL)/);
  });

  it('a stopped agent (SIGSTOP) is caught by heartbeats and fenced out', async () => {
    const { message, goneAfterClose } = await failureAfter(0, 'SIGSTOP');
    expect(message).toMatch(/rank 0 on local-\d \(pid \d+\) stopped answering: no heartbeat for [\d.]+ s\. It was fenced out/);
    // Closing the studio ends the stopped agent too: it must not be left behind, stopped, for good.
    expect(goneAfterClose).toBe(true);
  });
});
