import type { Socket } from 'node:net';
import { encodeFrame, FrameDecoder, freshPayload, MAX_FRAME_BYTES, type Message } from './frame.js';
import type { ReadRouter } from './readRouter.js';

/** A receive that waited longer than it was allowed to; collectives turn it into a message naming ranks. */
export class ReceiveTimeout extends Error {
  constructor(readonly peer: string, readonly tag: string, readonly timeoutMs: number) {
    super(`Waiting for "${tag}" from ${peer} timed out after ${timeoutMs / 1000} s.`);
  }
}

export interface ReceiveOptions {
  /** Reject with a ReceiveTimeout after this long (default: wait as long as the connection lives). */
  timeoutMs?: number;
  /**
   * Where the payload should land if it has not arrived yet: the decoder then writes the bytes
   * straight into it. The resolved message's payload is this buffer, or a fresh one if the message
   * came early (or has another length), so callers compare before copying.
   */
  sink?: Uint8Array;
}

interface Waiter {
  resolve: (m: Message) => void;
  reject: (e: Error) => void;
}

/**
 * What a peer that has not authenticated may send: frames of at most `maxFrameBytes`, and
 * `maxTotalBytes` in all, after which the socket is destroyed (so frames with made-up tags cannot
 * pile up in the mailbox while a handshake is pending). Lifted by `acceptLargeFrames()`.
 */
export interface IncomingLimit {
  maxFrameBytes: number;
  maxTotalBytes: number;
}

/** Queued bytes above which `whenWritable` waits for the socket to drain (backpressure). */
const HIGH_WATER_BYTES = 16 << 20;

/**
 * A framed, authenticated connection. Incoming messages carrying a `tag` wait in a mailbox until
 * someone asks for that tag (point-to-point receive); others go to the `onMessage` handler.
 */
export class Connection {
  private readonly decoder: FrameDecoder;
  private readonly router: ReadRouter | null;
  /** Bytes still allowed before authentication (Infinity once the peer has authenticated). */
  private budget = Infinity;
  private budgetBytes = 0;
  private readonly mailbox = new Map<string, Message[]>();
  private readonly waiting = new Map<string, Waiter[]>();
  private readonly sinks = new Map<string, Uint8Array>();
  private readonly closeListeners = new Set<(error: Error) => void>();
  private closedError: Error | null = null;
  private handler: ((message: Message) => void) | null = null;
  /** Untagged messages that arrived before anyone listened (e.g. in the same packet as the handshake). */
  private backlog: Message[] = [];
  onClose: (error: Error) => void = () => {};

  /**
   * `router`: the socket reads through a ReadRouter (payloads land straight in their destination);
   * without one, it is read with plain 'data' events. `limit`: the peer has not authenticated yet.
   */
  constructor(readonly socket: Socket, readonly peer: string, router: ReadRouter | null = null, limit?: IncomingLimit) {
    this.router = router;
    this.decoder = new FrameDecoder((header, length) => this.payloadTarget(header, length), limit?.maxFrameBytes ?? MAX_FRAME_BYTES);
    if (limit) this.budget = this.budgetBytes = limit.maxTotalBytes;
    socket.setNoDelay(true);
    const received = (bytes: number, messages: () => Message[] | Message | null) => {
      let out: Message[] | Message | null;
      try {
        this.budget -= bytes;
        if (this.budget < 0) throw new Error(`Sent more than ${this.budgetBytes} bytes before authenticating; the peer is not speaking Shoal's protocol.`);
        out = messages();
      } catch (err) {
        socket.destroy(err as Error);
        return;
      }
      if (Array.isArray(out)) for (const m of out) this.dispatch(m);
      else if (out) this.dispatch(out);
    };
    if (router) {
      router.attach({
        target: () => (this.closedError ? null : this.decoder.payloadWindow()),
        direct: (n) => received(n, () => this.decoder.filled(n)),
        staged: (bytes) => received(bytes.length, () => this.decoder.push(bytes)),
      });
    } else {
      socket.on('data', (chunk: Buffer) => received(chunk.length, () => this.decoder.push(chunk)));
    }
    const closed = (err?: Error) => {
      if (this.closedError) return;
      this.closedError = err ?? new Error(`Connection to ${this.peer} closed.`);
      for (const list of this.waiting.values()) for (const w of list) w.reject(this.closedError);
      this.waiting.clear();
      this.sinks.clear();
      for (const listener of this.closeListeners) listener(this.closedError);
      this.closeListeners.clear();
      this.onClose(this.closedError);
    };
    socket.on('error', (err) => closed(new Error(`Connection to ${this.peer} failed: ${err.message}`)));
    socket.on('close', () => closed());
  }

  /** Handler of untagged messages; messages that arrived earlier are delivered as soon as it is set. */
  set onMessage(handler: (message: Message) => void) {
    this.handler = handler;
    const early = this.backlog;
    this.backlog = [];
    for (const m of early) handler(m);
  }

  /** The peer has authenticated: lift the handshake's limits (frames up to MAX_FRAME_BYTES, no total). */
  acceptLargeFrames(): void {
    this.decoder.maxFrameBytes = MAX_FRAME_BYTES;
    this.budget = Infinity;
    this.router?.widen();
  }

  get closed(): boolean {
    return this.closedError !== null;
  }

  /** Be told when the connection closes (at once if it already has); returns a function that unsubscribes. */
  whenClosed(listener: (error: Error) => void): () => void {
    if (this.closedError) {
      listener(this.closedError);
      return () => {};
    }
    this.closeListeners.add(listener);
    return () => this.closeListeners.delete(listener);
  }

  /**
   * Queue a message; the payload is written from the caller's memory, so it must not change until
   * the write completes (use `sendFlushed` to know when). Returns false once the socket's queue is
   * above its high-water mark.
   */
  send(header: Message['header'], payload?: Uint8Array): boolean {
    return this.write(header, payload);
  }

  /** Like `send`, resolving once the bytes are handed to the kernel (so the payload may be reused). */
  sendFlushed(header: Message['header'], payload?: Uint8Array): Promise<void> {
    return new Promise((resolve) => this.write(header, payload, () => resolve()));
  }

  /** Resolves when the socket's queue is small enough to add more (at once if it already is). */
  whenWritable(): Promise<void> {
    if (this.closedError || this.socket.writableLength < HIGH_WATER_BYTES) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        this.socket.off('drain', done);
        this.socket.off('close', done);
        resolve();
      };
      this.socket.on('drain', done);
      this.socket.on('close', done);
    });
  }

  private write(header: Message['header'], payload: Uint8Array | undefined, flushed?: () => void): boolean {
    if (this.closedError) throw this.closedError;
    const parts = encodeFrame({ header, payload });
    // Cork so the header and the payload leave in one writev instead of two packets.
    this.socket.cork();
    let ok = true;
    parts.forEach((part, i) => {
      ok = this.socket.write(part, i === parts.length - 1 ? flushed : undefined);
    });
    this.socket.uncork();
    return ok;
  }

  /** Wait for the message with this tag (it may already have arrived). */
  receive(tag: string, options: ReceiveOptions = {}): Promise<Message> {
    const queued = this.mailbox.get(tag);
    if (queued && queued.length > 0) {
      const m = queued.shift()!;
      if (queued.length === 0) this.mailbox.delete(tag);
      return Promise.resolve(m);
    }
    if (this.closedError) return Promise.reject(this.closedError);
    return new Promise((resolve, reject) => {
      const list = this.waiting.get(tag) ?? [];
      let timer: ReturnType<typeof setTimeout> | undefined;
      const waiter: Waiter = {
        resolve: (m) => (clearTimeout(timer), resolve(m)),
        reject: (e) => (clearTimeout(timer), reject(e)),
      };
      if (options.timeoutMs !== undefined) {
        timer = setTimeout(() => {
          const now = this.waiting.get(tag);
          const i = now?.indexOf(waiter) ?? -1;
          if (i >= 0) now!.splice(i, 1);
          if (now?.length === 0) this.waiting.delete(tag);
          if (this.sinks.get(tag) === options.sink) this.sinks.delete(tag);
          reject(new ReceiveTimeout(this.peer, tag, options.timeoutMs!));
        }, options.timeoutMs);
      }
      // Only the first waiter of a tag may name a sink: the next frame with that tag is its message.
      if (options.sink && list.length === 0 && !this.sinks.has(tag)) this.sinks.set(tag, options.sink);
      list.push(waiter);
      this.waiting.set(tag, list);
    });
  }

  private payloadTarget(header: Message['header'], length: number): Uint8Array {
    const tag = header.tag;
    if (typeof tag === 'string') {
      const sink = this.sinks.get(tag);
      if (sink) {
        this.sinks.delete(tag);
        if (sink.byteLength === length) return sink;
      }
    }
    return freshPayload(header, length);
  }

  private dispatch(message: Message): void {
    const tag = message.header.tag;
    if (typeof tag !== 'string') {
      if (this.handler) this.handler(message);
      else this.backlog.push(message);
      return;
    }
    // A sink belongs to the first waiter, whom this message answers whether or not it landed there.
    this.sinks.delete(tag);
    const list = this.waiting.get(tag);
    if (list && list.length > 0) {
      list.shift()!.resolve(message);
      if (list.length === 0) this.waiting.delete(tag);
      return;
    }
    const queued = this.mailbox.get(tag) ?? [];
    queued.push(message);
    this.mailbox.set(tag, queued);
  }

  close(): void {
    this.socket.end();
  }
}
