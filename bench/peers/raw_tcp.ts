/**
 * Raw loopback TCP between two Node processes: the physical reference for the all-reduce benchmark.
 *
 *   tsx bench/peers/raw_tcp.ts [--mb 1024]
 *
 * No framing, no protocol: one process writes 4 MiB buffers as fast as the socket takes them, the
 * other counts bytes. Measured three ways, each reported in GB/s (10^9 bytes/s):
 * - `dataEvents`: the receiver uses plain 'data' events (a fresh 64 KiB buffer per read, what a
 *   straightforward Node program and Shoal's Connection get);
 * - `userBuffer`: the receiver reads into one reused buffer (net's `onread` option): the best Node can do;
 * - `bidirectional`: both processes send and receive at once (per direction, 'data' events) — what
 *   each member of a ring does during an all-reduce;
 * - `bidirectionalUserBuffer`: the same with reused read buffers on both sides (each process reads
 *   on the connection it dialed, as a ring member sends to one peer and receives from another): the
 *   most a ring member can move each way at once, with nothing else to do.
 * Prints one JSON line.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { connect, createServer, type Socket } from 'node:net';
import { fileURLToPath } from 'node:url';

type Mode = 'dataEvents' | 'userBuffer' | 'bidirectional' | 'bidirectionalUserBuffer';
const args = process.argv.slice(2);
const totalBytes = Number(args[args.indexOf('--mb') + 1] ?? 0) * 2 ** 20 || 2 ** 30;
const CHUNK = 4 << 20;

/** Write `total` bytes, respecting backpressure. */
function pump(socket: Socket, total: number): void {
  const buf = Buffer.alloc(CHUNK, 7);
  let sent = 0;
  const go = () => {
    while (sent < total) {
      sent += CHUNK;
      if (!socket.write(buf)) return void socket.once('drain', go);
    }
  };
  go();
}

/** Count bytes until `total`; returns GB/s from the first byte to the last. */
function count(total: number, done: (gbps: number) => void): (n: number) => void {
  let got = 0;
  let t0 = 0;
  return (n) => {
    if (t0 === 0) t0 = performance.now();
    got += n;
    if (got >= total) done(total / ((performance.now() - t0) / 1000) / 1e9);
  };
}

/** Dial `port` and count what arrives there, read into one reused buffer. */
function receiveRouted(port: number, onBytes: (n: number) => void): Socket {
  return connect({ port, host: '127.0.0.1', onread: { buffer: Buffer.allocUnsafe(1 << 20), callback: (n) => (onBytes(n), true) } });
}

/** Listen once; the first connection is sent `total` bytes. Resolves with the port. */
async function serveBytes(total: number): Promise<{ port: number; close: () => void }> {
  const server = createServer((socket) => pump(socket, total));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { port: (server.address() as { port: number }).port, close: () => server.close() };
}

/** Child: dial the parent and receive (and, bidirectionally, also send). */
function child(mode: Mode, port: number): void {
  const report = (gbps: number) => process.send!({ gbps });
  if (mode === 'bidirectionalUserBuffer') {
    // Serve the child→parent direction, tell the parent where, and receive parent→child routed.
    void serveBytes(totalBytes).then(({ port: mine }) => {
      process.send!({ port: mine });
      receiveRouted(port, count(totalBytes, report));
    });
    return;
  }
  const onBytes = count(totalBytes, report);
  const socket =
    mode === 'userBuffer'
      ? connect({ port, host: '127.0.0.1', onread: { buffer: Buffer.allocUnsafe(1 << 20), callback: (n) => (onBytes(n), true) } })
      : connect(port, '127.0.0.1');
  if (mode !== 'userBuffer') socket.on('data', (b: Buffer) => onBytes(b.length));
  if (mode === 'bidirectional') socket.once('connect', () => pump(socket, totalBytes));
}

async function measureBothRouted(): Promise<number> {
  const served = await serveBytes(totalBytes);
  const proc: ChildProcess = fork(fileURLToPath(import.meta.url), ['--child', 'bidirectionalUserBuffer', String(served.port), '--mb', String(totalBytes / 2 ** 20)], { execArgv: process.execArgv });
  let parentGbps = Infinity;
  const childGbps = await new Promise<number>((resolve) =>
    proc.on('message', (m: { port?: number; gbps?: number }) => {
      if (m.port !== undefined) receiveRouted(m.port, count(totalBytes, (g) => (parentGbps = g)));
      if (m.gbps !== undefined) resolve(m.gbps);
    }),
  );
  while (parentGbps === Infinity) await new Promise((r) => setTimeout(r, 10));
  proc.kill();
  served.close();
  return Math.min(childGbps, parentGbps);
}

async function measure(mode: Mode): Promise<number> {
  if (mode === 'bidirectionalUserBuffer') return measureBothRouted();
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  const proc: ChildProcess = fork(fileURLToPath(import.meta.url), ['--child', mode, String(port), '--mb', String(totalBytes / 2 ** 20)], { execArgv: process.execArgv });
  let parentGbps = Infinity;
  server.once('connection', (socket) => {
    pump(socket, totalBytes);
    if (mode === 'bidirectional') {
      const onBytes = count(totalBytes, (g) => (parentGbps = g));
      socket.on('data', (b: Buffer) => onBytes(b.length));
    }
    else socket.resume();
  });
  const childGbps = await new Promise<number>((resolve) => proc.once('message', (m: { gbps: number }) => resolve(m.gbps)));
  // Bidirectional: the slower direction is what both ring directions get.
  if (mode === 'bidirectional') while (parentGbps === Infinity) await new Promise((r) => setTimeout(r, 10));
  proc.kill();
  server.close();
  return Math.min(childGbps, parentGbps);
}

if (args[0] === '--child') child(args[1] as Mode, Number(args[2]));
else {
  const result: Record<Mode, number> = { dataEvents: 0, userBuffer: 0, bidirectional: 0, bidirectionalUserBuffer: 0 };
  // Best of two runs each: the machine may be shared, and the reference should be what TCP can do.
  for (const mode of Object.keys(result) as Mode[]) result[mode] = Math.max(await measure(mode), await measure(mode));
  console.log(JSON.stringify(result));
  process.exit(0);
}
