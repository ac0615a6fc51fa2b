import { connect, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Connection } from '../../engine/wire/connection.js';
import { HANDSHAKE_MAX_FRAME_BYTES, bytesToFloats, floatsToBytes } from '../../engine/wire/frame.js';
import { connectAuthenticated, HANDSHAKE_BUDGET_BYTES, listenAuthenticated, type ListenOptions } from '../../engine/wire/handshake.js';
import { RefusalLog } from '../../engine/wire/refusalLog.js';

/**
 * Before a peer has proved the job secret it gets almost nothing — small frames, a small
 * budget, a deadline, a capped number of slots — and every refusal is logged with its address. Once
 * authenticated, frames of any size (up to MAX_FRAME_BYTES) flow, and so does a large hello.
 */
const servers: Server[] = [];
const sockets: Socket[] = [];
afterEach(() => {
  sockets.splice(0).forEach((s) => s.destroy());
  servers.splice(0).forEach((s) => s.close());
});

async function listen(options: ListenOptions = {}): Promise<{ port: number; refused: string[]; accepted: Connection[]; hellos: Record<string, unknown>[] }> {
  const refused: string[] = [];
  const accepted: Connection[] = [];
  const hellos: Record<string, unknown>[] = [];
  const server = await listenAuthenticated('127.0.0.1', 0, 'secret', (conn, hello) => (accepted.push(conn), hellos.push(hello)), (peer, reason) => refused.push(`${peer} ${reason}`), options);
  servers.push(server);
  return { port: (server.address() as { port: number }).port, refused, accepted, hellos };
}

async function raw(port: number, bytes?: Buffer): Promise<Socket> {
  const socket = connect(port, '127.0.0.1');
  sockets.push(socket);
  socket.on('error', () => {});
  // Read (and drop) what the listener sends, so that its close is seen.
  socket.resume();
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  if (bytes) socket.write(bytes);
  return socket;
}

const closed = (socket: Socket) => new Promise<void>((resolve) => (socket.destroyed ? resolve() : socket.once('close', () => resolve())));

function prefix(headerLength: number, payloadLength: number): Buffer {
  const b = Buffer.alloc(8);
  b.writeUInt32BE(headerLength, 0);
  b.writeUInt32BE(payloadLength, 4);
  return b;
}
const frame = (header: object) => {
  const json = Buffer.from(JSON.stringify(header));
  return Buffer.concat([prefix(json.length, 0), json]);
};

describe('before authentication', () => {
  it('a 400 MiB length prefix is refused without allocating it, naming the peer and the limit', async () => {
    const { port, refused } = await listen();
    const socket = await raw(port, prefix(16, 400 << 20));
    await closed(socket);
    await vi.waitFor(() => expect(refused).toHaveLength(1));
    expect(refused[0]).toMatch(new RegExp(`^127\\.0\\.0\\.1:\\d+ Frame of ${(400 << 20) + 16} bytes exceeds the ${HANDSHAKE_MAX_FRAME_BYTES}-byte limit before authenticating`));
  });

  it('a header that is not a JSON object is refused (it never reaches a handler)', async () => {
    const { port, refused } = await listen();
    const json = Buffer.from('null');
    await closed(await raw(port, Buffer.concat([prefix(json.length, 0), json])));
    await vi.waitFor(() => expect(refused[0]).toMatch(/Frame header is not a JSON object/));
  });

  it('small frames with made-up tags cannot pile up: the budget ends the socket', async () => {
    const { port, refused } = await listen();
    const spam = Buffer.concat(Array.from({ length: 2000 }, (_, i) => frame({ type: 'x', tag: `t${i}` })));
    await closed(await raw(port, spam));
    await vi.waitFor(() => expect(refused[0]).toMatch(new RegExp(`Sent more than ${HANDSHAKE_BUDGET_BYTES} bytes before authenticating`)));
  });

  it('a silent peer loses its socket at the deadline; a real dialler waits out a full listener and gets in', async () => {
    const { port, refused, accepted } = await listen({ deadlineMs: 400, admission: { perListener: 4, perAddress: 1 } });
    const silent = await raw(port);
    const dialled = connectAuthenticated('127.0.0.1', port, 'secret', { who: 'late' });
    await closed(silent);
    const conn = await dialled;
    await vi.waitFor(() => expect(accepted).toHaveLength(1));
    expect(refused.some((r) => /^127\.0\.0\.1:\d+ busy: 1 connections from 127\.0\.0\.1 are already authenticating \(at most 1 per address\)$/.test(r))).toBe(true);
    expect(refused.some((r) => /^127\.0\.0\.1:\d+ no authentication within 0\.4 s$/.test(r))).toBe(true);
    conn.close();
  });
});

describe('after authentication', () => {
  it('a large hello and a 16 MiB frame flow both ways', async () => {
    const { port, accepted, hellos } = await listen();
    const names = Array.from({ length: 5000 }, (_, i) => `model/block_${i}/attention/query/kernel`);
    const client = await connectAuthenticated('127.0.0.1', port, 'secret', { purpose: 'state', names });
    await vi.waitFor(() => expect(accepted).toHaveLength(1));
    expect(hellos[0]).toEqual({ purpose: 'state', names });
    const big = Float32Array.from({ length: 4 << 20 }, (_, i) => i % 1000);
    const got = accepted[0].receive('big');
    client.send({ type: 't', tag: 'big' }, floatsToBytes(big));
    const received = bytesToFloats((await got).payload);
    expect(Buffer.from(received.buffer, received.byteOffset, received.byteLength).equals(Buffer.from(big.buffer))).toBe(true);
    const back = client.receive('back');
    accepted[0].send({ type: 't', tag: 'back' }, floatsToBytes(big));
    expect((await back).payload!.byteLength).toBe(big.byteLength);
    client.close();
  });
});

describe('the refusal log', () => {
  it('passes the first refusals of a window on and summarises the rest by address', async () => {
    const lines: string[] = [];
    const log = new RefusalLog((peer, reason) => lines.push(`${peer}: ${reason}`), 3, 100);
    for (let i = 0; i < 10; i++) log.note(`10.0.0.${i % 2}:${1000 + i}`, 'busy');
    expect(lines).toHaveLength(3);
    await vi.waitFor(() => expect(lines).toHaveLength(4));
    expect(lines[3]).toBe('10.0.0.1 ×4, 10.0.0.0 ×3: 7 more connections refused in the last 0.1 s, not logged one by one (the last: busy)');
  });
});
