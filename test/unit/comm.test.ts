import { connect, createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Connection, ReceiveTimeout } from '../../engine/wire/connection.js';
import { encodeFrame, FrameDecoder, bytesToFloats, floatsToBytes } from '../../engine/wire/frame.js';
import { connectAuthenticated, listenAuthenticated } from '../../engine/wire/handshake.js';
import { PeerMesh } from '../../agents/comm/peerMesh.js';
import { ringAllReduce } from '../../agents/comm/ringAllReduce.js';

const servers: Server[] = [];
const meshes: PeerMesh[] = [];
afterEach(() => {
  servers.splice(0).forEach((s) => s.close());
  meshes.splice(0).forEach((m) => m.close());
});

describe('framing', () => {
  it('decodes frames split at every byte boundary', () => {
    const payload = floatsToBytes(new Float32Array([1.5, -2, 3.25]));
    const bytes = Buffer.concat([...encodeFrame({ header: { type: 'a', n: 1 }, payload }), ...encodeFrame({ header: { type: 'b' } })]);
    const decoder = new FrameDecoder();
    const out = [];
    for (let i = 0; i < bytes.length; i++) out.push(...decoder.push(bytes.subarray(i, i + 1)));
    expect(out.map((m) => m.header.type)).toEqual(['a', 'b']);
    expect(Array.from(bytesToFloats(out[0].payload))).toEqual([1.5, -2, 3.25]);
    expect(out[1].payload).toBeUndefined();
  });

  it('writes a payload into the buffer its allocator chooses, and exposes the unfilled rest for direct reads', () => {
    const target = new Uint8Array(12);
    const decoder = new FrameDecoder((header, length) => (header.tag === 'mine' && length === 12 ? target : new Uint8Array(length)));
    const bytes = Buffer.concat(encodeFrame({ header: { type: 't', tag: 'mine' }, payload: floatsToBytes(new Float32Array([1, 2, 3])) }));
    // Prefix, header and the first float arrive as a chunk; the rest is "read" straight into the window.
    const headLength = bytes.length - 8;
    expect(decoder.push(bytes.subarray(0, headLength))).toEqual([]);
    const window = decoder.payloadWindow()!;
    expect(window.byteLength).toBe(8);
    window.set(bytes.subarray(headLength));
    const done = decoder.filled(8)!;
    expect(done.payload).toBe(target);
    expect(Array.from(bytesToFloats(done.payload))).toEqual([1, 2, 3]);
    expect(decoder.payloadWindow()).toBeNull();
  });

  it('rejects an absurd frame length instead of allocating it', () => {
    const bad = Buffer.alloc(8);
    bad.writeUInt32BE(0xffffffff, 0);
    expect(() => new FrameDecoder().push(bad)).toThrow(/exceeds/);
  });
});

async function listen(secret: string, refused: string[] = []): Promise<{ port: number; accepted: Promise<Connection> }> {
  let accept!: (c: Connection) => void;
  const accepted = new Promise<Connection>((r) => (accept = r));
  const server = await listenAuthenticated('127.0.0.1', 0, secret, (conn) => accept(conn), (peer, reason) => refused.push(`${peer}: ${reason}`));
  servers.push(server);
  return { port: (server.address() as { port: number }).port, accepted };
}

describe('authenticated connections', () => {
  it('accept the right secret and carry tagged messages both ways', async () => {
    const { port, accepted } = await listen('s3cret');
    const client = await connectAuthenticated('127.0.0.1', port, 's3cret', { who: 'test' });
    const server = await accepted;
    client.send({ type: 'x', tag: 't1' }, floatsToBytes(new Float32Array([7])));
    expect(Array.from(bytesToFloats((await server.receive('t1')).payload))).toEqual([7]);
    server.send({ type: 'y', tag: 't2' });
    expect((await client.receive('t2')).header.type).toBe('y');
    client.close();
  });

  it('refuse a wrong secret and log the peer address', async () => {
    const refused: string[] = [];
    const { port } = await listen('right', refused);
    await expect(connectAuthenticated('127.0.0.1', port, 'wrong', {})).rejects.toThrow(/refused the job secret/);
    await vi.waitFor(() => expect(refused).toHaveLength(1));
    expect(refused[0]).toMatch(/^127\.0\.0\.1:\d+: wrong job secret$/);
  });

  it('a client refuses a server that does not know the secret', async () => {
    // A server with another secret cannot produce the right proof, so the client must not trust it.
    const { port } = await listen('server-secret');
    await expect(connectAuthenticated('127.0.0.1', port, 'client-secret', {})).rejects.toThrow();
  });
});

describe('connections without routed reads', () => {
  it("carry large payloads over plain 'data' events, into a sink when one waits, and time out by name", async () => {
    const server = createServer();
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const accepted = new Promise<Socket>((r) => server.once('connection', r));
    const client = connect((server.address() as { port: number }).port, '127.0.0.1');
    const a = new Connection(client, 'server');
    const b = new Connection(await accepted, 'client');
    const big = Float32Array.from({ length: 1 << 20 }, (_, i) => i);
    const sink = new Uint8Array(big.byteLength);
    const got = b.receive('big', { sink, timeoutMs: 10_000 });
    await a.sendFlushed({ type: 't', tag: 'big' }, floatsToBytes(big));
    const message = await got;
    expect(message.payload).toBe(sink);
    expect(bytesToFloats(sink)[123_456]).toBe(123_456);
    const late = b.receive('never', { timeoutMs: 50 });
    await expect(late).rejects.toBeInstanceOf(ReceiveTimeout);
    await expect(late).rejects.toThrow(/"never" from client timed out after 0\.05 s/);
    a.close();
    b.close();
  });
});

describe('ring all-reduce', () => {
  it('sums arrays across 3 members, identically on each', async () => {
    const n = 3;
    const secret = 'ring';
    const mesh = Array.from({ length: n }, () => new PeerMesh(secret, () => {}));
    meshes.push(...mesh);
    const ports = await Promise.all(mesh.map((m) => m.listen('127.0.0.1')));
    const peers = ports.map((port, rank) => ({ rank, host: '127.0.0.1', port }));
    await Promise.all(mesh.map((m, rank) => m.connect(rank, peers.filter((p) => p.rank !== rank))));
    const length = 1001; // not divisible by 3: uneven chunks
    const data = mesh.map((_, rank) => Float32Array.from({ length }, (_, i) => rank * 1000 + i));
    await Promise.all(mesh.map((m, rank) => ringAllReduce(data[rank], rank, [0, 1, 2], m.links, 'sum')));
    const expected = Float32Array.from({ length }, (_, i) => 3000 + 3 * i);
    for (const d of data) expect(Array.from(d)).toEqual(Array.from(expected));
  });
});
