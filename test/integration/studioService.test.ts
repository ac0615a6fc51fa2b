import { afterEach, describe, expect, it } from 'vitest';
import { createStudioService, type StudioService } from '../../engine/node/api.js';
import { zooModel } from '../../engine/model/zoo.js';
import { presetPlan } from '../../engine/plan/presets.js';
import type { JobEvent } from '../../engine/protocol/events.js';

let service: StudioService | null = null;
afterEach(async () => {
  await service?.close();
  service = null;
});

function collect(svc: StudioService): { events: JobEvent[]; until: (pred: (e: JobEvent) => boolean) => Promise<JobEvent> } {
  const events: JobEvent[] = [];
  const waiters: Array<{ pred: (e: JobEvent) => boolean; resolve: (e: JobEvent) => void }> = [];
  svc.onJobEvent((_, event) => {
    events.push(event);
    for (const w of waiters.filter((w) => w.pred(event))) w.resolve(event);
  });
  return { events, until: (pred) => new Promise((resolve) => waiters.push({ pred, resolve })) };
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
    expect(final.type === 'final' && final.testAccuracy).toBeGreaterThan(0.5);
    const backfill = await service.jobEvents(jobId, 0);
    expect(backfill.filter((e) => e.type === 'step')).toHaveLength(30);
    expect((await service.listJobs())[0]).toMatchObject({ id: jobId, model: 'mlp', agents: 2 });
  });

  it('rejects a malformed request with the field at fault', async () => {
    service = createStudioService({ shell: 'web' });
    await expect(service.startTraining({ plan: { version: 1 } as never, agents: 2 })).rejects.toThrow(/malformed: plan\.model/);
  });

  /** Start a long job, send `signal` to rank `rank` once it trains, and return the failure message. */
  async function failureAfter(rank: number, signal: NodeJS.Signals): Promise<string> {
    service = createStudioService({ shell: 'web' });
    const stream = collect(service);
    await service.startTraining({ plan: presetPlan(zooModel('mlp'), 'pp2-dp1'), agents: 2, steps: 100_000 });
    const agent = await stream.until((e) => e.type === 'agent' && e.rank === rank);
    await stream.until((e) => e.type === 'step' && e.step >= 3);
    process.kill(agent.type === 'agent' ? agent.pid : 0, signal);
    const failed = await stream.until((e) => e.type === 'status' && e.state === 'failed');
    return failed.type === 'status' ? (failed.message ?? '') : '';
  }

  it('a killed agent fails the job with a message naming its rank and host', async () => {
    expect(await failureAfter(1, 'SIGKILL')).toMatch(/rank 1 on local-\d \(pid \d+\) (disconnected|was killed by SIGKILL)/);
  });

  it('a stopped agent (SIGSTOP) is caught by heartbeats and fenced out', async () => {
    expect(await failureAfter(0, 'SIGSTOP')).toMatch(/rank 0 on local-\d \(pid \d+\) stopped answering: no heartbeat for [\d.]+ s\. It was fenced out/);
  });
});
