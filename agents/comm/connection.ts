import type { Socket } from 'node:net';
import { encodeFrame, FrameDecoder, type Message } from './frame.js';

/**
 * A framed, authenticated connection. Incoming messages carrying a `tag` wait in a mailbox until
 * someone asks for that tag (point-to-point receive); others go to the `onMessage` handler.
 */
export class Connection {
  private readonly decoder = new FrameDecoder();
  private readonly mailbox = new Map<string, Message[]>();
  private readonly waiting = new Map<string, Array<{ resolve: (m: Message) => void; reject: (e: Error) => void }>>();
  private closedError: Error | null = null;
  private handler: ((message: Message) => void) | null = null;
  /** Untagged messages that arrived before anyone listened (e.g. in the same packet as the handshake). */
  private backlog: Message[] = [];
  onClose: (error: Error) => void = () => {};

  constructor(readonly socket: Socket, readonly peer: string) {
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => {
      let messages: Message[];
      try {
        messages = this.decoder.push(chunk);
      } catch (err) {
        socket.destroy(err as Error);
        return;
      }
      for (const m of messages) this.dispatch(m);
    });
    const closed = (err?: Error) => {
      if (this.closedError) return;
      this.closedError = err ?? new Error(`Connection to ${this.peer} closed.`);
      for (const list of this.waiting.values()) for (const w of list) w.reject(this.closedError);
      this.waiting.clear();
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

  get closed(): boolean {
    return this.closedError !== null;
  }

  send(header: Message['header'], payload?: Uint8Array): void {
    if (this.closedError) throw this.closedError;
    for (const part of encodeFrame({ header, payload })) this.socket.write(part);
  }

  /** Wait for the message with this tag (it may already have arrived). */
  receive(tag: string): Promise<Message> {
    const queued = this.mailbox.get(tag);
    if (queued && queued.length > 0) {
      const m = queued.shift()!;
      if (queued.length === 0) this.mailbox.delete(tag);
      return Promise.resolve(m);
    }
    if (this.closedError) return Promise.reject(this.closedError);
    return new Promise((resolve, reject) => {
      const list = this.waiting.get(tag) ?? [];
      list.push({ resolve, reject });
      this.waiting.set(tag, list);
    });
  }

  private dispatch(message: Message): void {
    const tag = message.header.tag;
    if (typeof tag !== 'string') {
      if (this.handler) this.handler(message);
      else this.backlog.push(message);
      return;
    }
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
