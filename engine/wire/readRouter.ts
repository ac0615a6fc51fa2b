import { connect, Socket } from 'node:net';

/** What a connection does with the bytes a socket reads (see ReadRouter). */
export interface ReadConsumer {
  /** Memory the next read may fill directly (the rest of a payload being received), or null. */
  target(): Uint8Array | null;
  /** `n` bytes were read straight into the last `target()`. */
  direct(n: number): void;
  /** Bytes read into the shared staging buffer (headers, small frames); valid only during the call. */
  staged(bytes: Uint8Array): void;
}

/** Staging reads: large enough that many small frames arrive per system call. */
const STAGING_BYTES = 256 << 10;
/**
 * After a large payload, the next staging read is kept this short: enough for the next frame's
 * prefix and header, so that its payload (probably large too) is read straight into place rather
 * than staged and copied.
 */
const HEADER_READ_BYTES = 4096;
const LARGE_PAYLOAD_BYTES = 64 << 10;

/**
 * Chooses, read by read, where the kernel writes a socket's incoming bytes (Node's `onread` option).
 * While a payload is being received, the next read goes straight into the payload's destination — for
 * a collective that is the very range of the array being reduced or gathered — so a large tensor costs
 * one copy (kernel to its place) instead of three (kernel to a fresh 64 KiB buffer, to a frame buffer,
 * to its place), and no per-read garbage. Between payloads, reads go to one reused staging buffer.
 */
export class ReadRouter {
  /**
   * Small until `widen()`: a socket whose peer has not authenticated reads at most a handshake's worth
   * at a time, so a flood of unauthenticated sockets holds a few KiB each, not 256 KiB.
   */
  private stagingBuffer: Buffer;
  private consumer: ReadConsumer | null = null;
  private lastWasDirect = false;
  /** Bytes read directly since the last staging read: large means large frames are flowing. */
  private directRun = 0;
  /** Bytes read before a consumer attached (copied, as staging is reused). */
  private early: Buffer[] = [];

  constructor(narrow = false) {
    this.stagingBuffer = Buffer.allocUnsafe(narrow ? HEADER_READ_BYTES : STAGING_BYTES);
  }

  /** Full-size staging reads from now on (the peer has authenticated). */
  widen(): void {
    if (this.stagingBuffer.length < STAGING_BYTES) this.stagingBuffer = Buffer.allocUnsafe(STAGING_BYTES);
  }

  readonly buffer = (): Uint8Array => {
    const target = this.consumer?.target();
    this.lastWasDirect = !!target && target.byteLength > 0;
    if (this.lastWasDirect) return target!;
    return this.directRun >= LARGE_PAYLOAD_BYTES ? this.stagingBuffer.subarray(0, HEADER_READ_BYTES) : this.stagingBuffer;
  };

  readonly callback = (n: number, buf: Uint8Array): boolean => {
    if (this.lastWasDirect) {
      this.directRun += n;
      this.consumer!.direct(n);
      return true;
    }
    this.directRun = 0;
    if (this.consumer) this.consumer.staged(buf.subarray(0, n));
    else this.early.push(Buffer.from(buf.subarray(0, n)));
    return true;
  };

  attach(consumer: ReadConsumer): void {
    this.consumer = consumer;
    const early = this.early;
    this.early = [];
    for (const bytes of early) consumer.staged(bytes);
  }
}

/** Dial with routed reads (the public `onread` option of net.connect), narrow until `widen()`. */
export function connectRouted(port: number, host: string): { socket: Socket; router: ReadRouter } {
  const router = new ReadRouter(true);
  return { socket: connect({ port, host, onread: router }), router };
}

interface SocketInternals {
  _handle?: unknown;
  _server?: unknown;
  server?: unknown;
}

/**
 * Give an accepted socket routed reads. Node offers `onread` only when creating a socket, and a
 * server creates its sockets itself; so a server started with `pauseOnConnect` (nothing read yet)
 * hands each accepted socket's handle to a new Socket that has `onread`. This touches Node's
 * `_handle`, a stable but private field: if it is ever missing, the socket is kept as it is and the
 * connection falls back to 'data' events (correct, just slower). The router is narrow until `widen()`.
 */
export function adoptRouted(accepted: Socket): { socket: Socket; router: ReadRouter | null } {
  const old = accepted as unknown as SocketInternals;
  if (!old._handle) {
    accepted.resume();
    return { socket: accepted, router: null };
  }
  const router = new ReadRouter(true);
  const handle = old._handle;
  old._handle = null;
  const socket = new Socket({ handle, onread: router, readable: true, writable: true } as ConstructorParameters<typeof Socket>[0]);
  // Move the server's connection accounting to the new socket so server.close() still completes.
  const fresh = socket as unknown as SocketInternals;
  fresh._server = old._server;
  fresh.server = old.server;
  old._server = null;
  return { socket, router };
}
