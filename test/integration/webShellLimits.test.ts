import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { serveStudio, UNAUTHENTICATED_MAX_BYTES, type RunningShell } from '../../electron/webServer.js';
import { createStudioService } from '../../engine/node/api.js';
import { WS_PATH } from '../../engine/protocol/shellSocket.js';

/**
 * The browser shell's socket: a model import is one large message, but a socket that has not shown the
 * access token may send no more than 1 MiB — nothing unauthenticated can make the studio hold more.
 */
let shell: RunningShell;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'shoal-web-limits-'));
  shell = await serveStudio({ service: createStudioService({ shell: 'web' }), host: '127.0.0.1', port: 0, staticDir: dir });
});
afterAll(async () => {
  await shell?.close();
  rmSync(dir, { recursive: true, force: true });
});

function open(): Promise<WebSocket> {
  const ws = new WebSocket(`${shell.origin.replace('http', 'ws')}${WS_PATH}`, { origin: shell.origin });
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve(ws));
    ws.once('error', reject);
  });
}

const closed = (ws: WebSocket) => new Promise<number>((resolve) => ws.once('close', (code) => resolve(code)));
const nextMessage = (ws: WebSocket) => new Promise<Record<string, unknown>>((resolve) => ws.once('message', (data) => resolve(JSON.parse(data.toString()) as Record<string, unknown>)));
/** A call whose text is `bytes` long (a malformed parameter: only its size matters here). */
const bigCall = (bytes: number) => JSON.stringify({ kind: 'call', id: 1, method: 'info', params: ['x'.repeat(bytes)] });

describe('browser shell socket limits', () => {
  it('closes a socket that sends more than 1 MiB before its token (1009, message too big)', async () => {
    const ws = await open();
    const code = closed(ws);
    ws.send(bigCall(UNAUTHENTICATED_MAX_BYTES + 1024));
    expect(await code).toBe(1009);
  });

  it('takes a model-sized message once the token was presented', async () => {
    const ws = await open();
    const ready = nextMessage(ws);
    ws.send(JSON.stringify({ kind: 'auth', token: shell.token }));
    expect((await ready).kind).toBe('ready');
    const reply = nextMessage(ws);
    ws.send(bigCall(8 * UNAUTHENTICATED_MAX_BYTES));
    const answer = await reply;
    expect(answer).toMatchObject({ kind: 'result', id: 1 });
    ws.close();
  });
});
