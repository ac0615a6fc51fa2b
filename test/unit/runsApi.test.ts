import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dispatchCall } from '../../electron/rpcDispatch.js';
import { createStudioService, type StudioService } from '../../engine/node/api.js';
import { loadModel } from '../../engine/node/modelRef.js';
import { presetPlan } from '../../engine/plan/presets.js';

/** updateRun and deleteRun as a renderer calls them (WebSocket or IPC): parameters parsed, refusals readable. */
const data = mkdtempSync(join(tmpdir(), 'shoal-runs-api-'));
const previous = process.env.SHOAL_DATA_DIR;
let service: StudioService;
beforeAll(() => {
  process.env.SHOAL_DATA_DIR = data;
  service = createStudioService({ shell: 'web' });
  const dir = join(data, 'runs', 'run-1');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'job.json'), JSON.stringify({ jobId: 'run-1', createdAt: '2026-01-01T00:00:00.000Z', model: 'mlp', plan: presetPlan(loadModel('mlp'), 'pp1-dp1'), agents: 1, steps: 1 }));
});
afterAll(async () => {
  await service.close();
  if (previous === undefined) delete process.env.SHOAL_DATA_DIR;
  else process.env.SHOAL_DATA_DIR = previous;
  rmSync(data, { recursive: true, force: true });
});

const call = (method: string, ...params: unknown[]) => dispatchCall(service, { kind: 'call', id: 1, method, params });

describe('runs API over the wire', () => {
  it('names a run; a bad edit is refused naming the field', async () => {
    expect(await call('updateRun', 'run-1', { name: 'baseline', tags: ['a'] })).toMatchObject({ ok: true, value: { id: 'run-1', name: 'baseline', tags: ['a'] } });
    const bad = await call('updateRun', 'run-1', { name: 'x'.repeat(121) });
    expect(bad).toMatchObject({ ok: false, error: 'Bad parameters for updateRun: 1.name: a run name has at most 120 characters' });
    expect(await call('updateRun', '../etc', {})).toMatchObject({ ok: false, error: expect.stringContaining('a run id is a folder name') });
    expect((await service.listRuns())[0]).toMatchObject({ name: 'baseline' });
  });

  it('deletes a run into the trash; a second delete says there is no such run', async () => {
    expect(await call('deleteRun', 'run-1', { permanently: false })).toMatchObject({ ok: true, value: { id: 'run-1', trashedTo: join(data, 'trash', 'runs', 'run-1') } });
    expect(await call('deleteRun', 'run-1')).toMatchObject({ ok: false, error: expect.stringContaining('No run "run-1"') });
    expect(await call('deleteRun', 'run-1', { forever: true })).toMatchObject({ ok: false, error: expect.stringContaining('Bad parameters for deleteRun') });
    expect(await service.listRuns()).toEqual([]);
  });
});
