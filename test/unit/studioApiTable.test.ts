import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dispatchCall } from '../../electron/rpcDispatch.js';
import { createStudioService, type StudioService } from '../../engine/node/api.js';
import { zooEntries, zooModel } from '../../engine/model/zoo.js';
import { STUDIO_API, STUDIO_METHODS, STUDIO_STREAMS, type StudioMethod } from '../../engine/protocol/studioApi.js';
import { clientOver } from '../../renderer/src/api/client.js';
import type { Transport } from '../../renderer/src/api/transport.js';

/**
 * The studio API written once: the renderer's client, built from the table, over a transport that
 * hands each call to the shells' dispatcher and a real studio service — parameters parsed at the
 * boundary, results checked in the client.
 */
const data = mkdtempSync(join(tmpdir(), 'shoal-api-table-'));
const previous = process.env.SHOAL_DATA_DIR;
let service: StudioService;
let nextId = 1;
const overDispatch = (): Transport => ({
  shell: 'web',
  // A JSON round trip, as the WebSocket makes.
  call: async (method, params) => JSON.parse(JSON.stringify(await dispatchCall(service, JSON.parse(JSON.stringify({ kind: 'call', id: nextId++, method, params }))))),
  subscribe: () => () => {},
});
beforeAll(() => {
  process.env.SHOAL_DATA_DIR = data;
  service = createStudioService({ shell: 'web' });
});
afterAll(async () => {
  await service.close();
  if (previous === undefined) delete process.env.SHOAL_DATA_DIR;
  else process.env.SHOAL_DATA_DIR = previous;
  rmSync(data, { recursive: true, force: true });
});

describe('the studio API table', () => {
  it('names every method of the service once, and only onJobEvent streams', () => {
    expect([...STUDIO_METHODS, ...STUDIO_STREAMS].sort()).toEqual(Object.keys(STUDIO_API).sort());
    expect(STUDIO_STREAMS).toEqual(['onJobEvent']);
    for (const name of Object.keys(STUDIO_API)) expect(typeof (service as unknown as Record<string, unknown>)[name]).toBe('function');
  });

  it('the client returns what the service answers, checked against the result schemas', async () => {
    const client = clientOver(overDispatch());
    expect(await client.listModels()).toEqual(zooEntries());
    expect(await client.getModel('mlp')).toEqual(JSON.parse(JSON.stringify(zooModel('mlp'))));
    expect(await client.listRuns()).toEqual([]);
    expect(await client.listJobs()).toEqual([]);
    expect((await client.info()).shell).toBe('web');
  });

  it('refuses bad parameters at the boundary, naming the method and the field', async () => {
    const client = clientOver(overDispatch());
    await expect(client.getRun('../etc')).rejects.toThrow(/^Bad parameters for getRun: 0: a run id is a folder name/);
    await expect(client.stopJob('')).rejects.toThrow(/^Bad parameters for stopJob: 0: /);
    // An optional parameter left out is not sent at all (JSON has no undefined).
    await expect(client.deleteRun('run-none', undefined)).rejects.toThrow(/run-none/);
  });

  it('refuses a result that does not fit the method, saying what and what to do', async () => {
    const answers: Partial<Record<StudioMethod, unknown>> = { listModels: [{ name: 'mlp', layers: 'three' }], info: { version: '0.1.0' } };
    const client = clientOver({ shell: 'web', call: async (method) => ({ kind: 'result', id: 1, ok: true, value: answers[method] }), subscribe: () => () => {} });
    await expect(client.listModels()).rejects.toThrow(/answered listModels with data this page does not understand \(0\.description: .*0\.layers: .*\)\. Reload the page/);
    await expect(client.info()).rejects.toThrow(/answered info with data .*shell/);
  });

  it('delivers stream messages checked, and skips one it cannot read', () => {
    const heard: unknown[][] = [];
    let deliver: (message: { kind: 'event'; stream: 'onJobEvent'; message: unknown[] }) => void = () => {};
    const client = clientOver({ shell: 'web', call: async () => ({ kind: 'result', id: 1, ok: false, error: 'unused' }), subscribe: (listener) => ((deliver = listener), () => {}) });
    client.onJobEvent((jobId, event) => heard.push([jobId, event]));
    const event = { type: 'log', level: 'info', host: 'h', rank: null, message: 'm', time: 1 };
    const errors: unknown[] = [];
    const consoleError = console.error;
    console.error = (...args: unknown[]) => errors.push(args);
    try {
      deliver({ kind: 'event', stream: 'onJobEvent', message: ['job-1', { index: 3, event }] });
      deliver({ kind: 'event', stream: 'onJobEvent', message: ['job-1', { event }] });
    } finally {
      console.error = consoleError;
    }
    expect(heard).toEqual([['job-1', { index: 3, event }]]);
    expect(errors).toHaveLength(1);
  });
});
