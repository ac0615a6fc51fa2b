import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { MAX_UNAUTHENTICATED_SOCKETS, serveStudio, type RunningShell } from '../../electron/webServer.js';
import { createStudioService } from '../../engine/node/api.js';
import { WS_PATH } from '../../engine/protocol/shellSocket.js';

/**
 * The studio's own socket: like the job's wire, the browser shell keeps at most
 * MAX_UNAUTHENTICATED_SOCKETS sockets that have not presented the token; more are refused at the
 * upgrade, and a socket that authenticates frees its slot at once.
 */
let shell: RunningShell;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'shoal-web-flood-'));
  shell = await serveStudio({ service: createStudioService({ shell: 'web' }), host: '127.0.0.1', port: 0, staticDir: dir });
});
afterAll(async () => {
  await shell?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Open a socket: 'open', or the HTTP status the upgrade was refused with. */
function open(): Promise<{ ws: WebSocket; outcome: 'open' | number }> {
  const ws = new WebSocket(`${shell.origin.replace('http', 'ws')}${WS_PATH}`, { origin: shell.origin });
  return new Promise((resolve) => {
    ws.once('open', () => resolve({ ws, outcome: 'open' }));
    ws.once('unexpected-response', (_req, res) => resolve({ ws, outcome: res.statusCode ?? 0 }));
    ws.once('error', () => resolve({ ws, outcome: 0 }));
  });
}

describe('browser shell sockets waiting for the token', () => {
  it(`at most ${MAX_UNAUTHENTICATED_SOCKETS} wait at once; one more is refused (503); an authenticated one frees its slot`, async () => {
    const waiting = await Promise.all(Array.from({ length: MAX_UNAUTHENTICATED_SOCKETS }, () => open()));
    expect(waiting.every((w) => w.outcome === 'open')).toBe(true);
    const extra = await open();
    expect(extra.outcome).toBe(503);
    const ready = new Promise<string>((resolve) => waiting[0].ws.once('message', (data) => resolve(String(data))));
    waiting[0].ws.send(JSON.stringify({ kind: 'auth', token: shell.token }));
    expect(JSON.parse(await ready)).toMatchObject({ kind: 'ready' });
    const next = await open();
    expect(next.outcome).toBe('open');
    for (const w of [...waiting, next]) w.ws.terminate();
  });
});
