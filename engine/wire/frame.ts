/**
 * Wire framing: every message is [u32 header length][u32 payload length][header JSON][payload bytes].
 * The header is small JSON (type, tag, step…); the payload carries tensors as raw float32 bytes, so
 * large arrays cross the wire without text encoding.
 */
export type FrameHeader = Record<string, unknown> & { type: string };

/** A frame as received or sent; `H` narrows the header once a schema has checked it (engine/protocol). */
export interface Message<H extends FrameHeader = FrameHeader> {
  header: H;
  payload?: Uint8Array;
}

const PREFIX = 8;
/** Guard against a corrupt length field of an authenticated peer allocating gigabytes. */
export const MAX_FRAME_BYTES = 1 << 30;
/**
 * The largest frame a peer may send before it has proved the job secret: the handshake's frames are a
 * few hundred bytes, so an unauthenticated peer can make a process hold no more than this per socket.
 */
export const HANDSHAKE_MAX_FRAME_BYTES = 4096;

/**
 * The frame as the parts to write: the prefix and header in one small buffer, then the payload as a
 * view of the caller's memory (never copied: a 100 MB gradient goes to the socket as it is).
 */
export function encodeFrame(message: Message): Buffer[] {
  const json = JSON.stringify(message.header);
  const headerLength = Buffer.byteLength(json, 'utf8');
  const payloadLength = message.payload?.byteLength ?? 0;
  const head = Buffer.allocUnsafe(PREFIX + headerLength);
  head.writeUInt32BE(headerLength, 0);
  head.writeUInt32BE(payloadLength, 4);
  head.write(json, PREFIX, 'utf8');
  if (!message.payload || payloadLength === 0) return [head];
  return [head, Buffer.from(message.payload.buffer, message.payload.byteOffset, payloadLength)];
}

/**
 * Chooses where a payload of `length` bytes will be written as it arrives. Receivers that know where
 * a tensor belongs (a collective's destination range) return that memory, so the bytes land in place.
 */
export type PayloadAllocator = (header: Message['header'], length: number) => Uint8Array;

/**
 * A fresh buffer of its own (offset 0, so it can be viewed as a Float32Array) and not zero-filled,
 * since every byte is about to be overwritten.
 */
export const freshPayload: PayloadAllocator = (_header, length) => {
  const b = Buffer.allocUnsafeSlow(length);
  return new Uint8Array(b.buffer, b.byteOffset, length);
};

/**
 * Incremental decoder: feed it socket chunks, it returns the complete messages they finish. The
 * payload buffer is allocated once from the length prefix and filled as chunks arrive, so a large
 * frame is never re-concatenated; only the few bytes of a prefix or header split across chunks are
 * staged.
 */
export class FrameDecoder {
  private readonly prefix = Buffer.alloc(PREFIX);
  private prefixFilled = 0;
  private headerLength = 0;
  private payloadLength = 0;
  private headerBytes: Buffer | null = null;
  private headerFilled = 0;
  private header: Message['header'] | null = null;
  private payload: Uint8Array | null = null;
  private payloadFilled = 0;

  /**
   * `maxFrameBytes`: frames announcing more are refused before anything is allocated for them; a
   * connection raises it once its peer has authenticated (Connection.acceptLargeFrames).
   */
  constructor(
    private readonly allocate: PayloadAllocator = freshPayload,
    public maxFrameBytes = MAX_FRAME_BYTES,
  ) {}

  push(chunk: Uint8Array): Message[] {
    const out: Message[] = [];
    let at = 0;
    while (at < chunk.length) {
      if (this.payload) at = this.fillPayload(chunk, at, out);
      else if (this.headerBytes) at = this.fillHeader(chunk, at, out);
      else at = this.fillPrefix(chunk, at, out);
    }
    return out;
  }

  /**
   * The unfilled rest of the payload being received, or null between payloads: a reader that can
   * choose its read buffer reads straight into it and then reports the bytes with `filled`.
   */
  payloadWindow(): Uint8Array | null {
    return this.payload ? this.payload.subarray(this.payloadFilled) : null;
  }

  /** Account for `n` bytes that were read directly into `payloadWindow()`; returns the message if it is now complete. */
  filled(n: number): Message | null {
    this.payloadFilled += n;
    return this.payloadFilled === this.payloadLength ? this.finish() : null;
  }

  private fillPrefix(chunk: Uint8Array, at: number, out: Message[]): number {
    const n = Math.min(PREFIX - this.prefixFilled, chunk.length - at);
    this.prefix.set(chunk.subarray(at, at + n), this.prefixFilled);
    this.prefixFilled += n;
    if (this.prefixFilled < PREFIX) return at + n;
    this.prefixFilled = 0;
    this.headerLength = this.prefix.readUInt32BE(0);
    this.payloadLength = this.prefix.readUInt32BE(4);
    if (this.headerLength + this.payloadLength > this.maxFrameBytes) {
      const when = this.maxFrameBytes < MAX_FRAME_BYTES ? ' before authenticating' : '';
      throw new Error(`Frame of ${this.headerLength + this.payloadLength} bytes exceeds the ${this.maxFrameBytes}-byte limit${when}; the peer is not speaking Shoal's protocol.`);
    }
    this.headerBytes = Buffer.allocUnsafe(this.headerLength);
    this.headerFilled = 0;
    if (this.headerLength === 0) this.headerDone(out);
    return at + n;
  }

  private fillHeader(chunk: Uint8Array, at: number, out: Message[]): number {
    const n = Math.min(this.headerLength - this.headerFilled, chunk.length - at);
    this.headerBytes!.set(chunk.subarray(at, at + n), this.headerFilled);
    this.headerFilled += n;
    if (this.headerFilled === this.headerLength) this.headerDone(out);
    return at + n;
  }

  private headerDone(out: Message[]): void {
    this.header = parseFrameHeader(this.headerBytes!);
    this.headerBytes = null;
    if (this.payloadLength === 0) {
      out.push(this.finish());
      return;
    }
    const target = this.allocate(this.header, this.payloadLength);
    if (target.byteLength !== this.payloadLength) throw new Error(`Payload buffer of ${target.byteLength} bytes for a ${this.payloadLength}-byte payload.`);
    this.payload = target;
    this.payloadFilled = 0;
  }

  private fillPayload(chunk: Uint8Array, at: number, out: Message[]): number {
    const n = Math.min(this.payloadLength - this.payloadFilled, chunk.length - at);
    this.payload!.set(chunk.subarray(at, at + n), this.payloadFilled);
    const done = this.filled(n);
    if (done) out.push(done);
    return at + n;
  }

  private finish(): Message {
    const message: Message = { header: this.header!, payload: this.payload ?? undefined };
    this.header = null;
    this.payload = null;
    this.payloadFilled = 0;
    return message;
  }
}

/**
 * A header must be a JSON object: anything else (garbage, `null`, an array, a number) is
 * refused here, in the decoder, so that no handler ever sees a header it would throw on.
 */
function parseFrameHeader(bytes: Buffer): Message['header'] {
  let header: unknown;
  try {
    header = JSON.parse(bytes.toString('utf8'));
  } catch {
    throw new Error(`Frame header of ${bytes.length} bytes is not JSON; the peer is not speaking Shoal's protocol.`);
  }
  if (typeof header !== 'object' || header === null || Array.isArray(header)) {
    throw new Error("Frame header is not a JSON object; the peer is not speaking Shoal's protocol.");
  }
  return header as Message['header'];
}

export function floatsToBytes(values: Float32Array): Uint8Array {
  return new Uint8Array(values.buffer, values.byteOffset, values.byteLength);
}

export function bytesToFloats(bytes: Uint8Array | undefined): Float32Array {
  if (!bytes) return new Float32Array(0);
  if (bytes.byteOffset % 4 === 0) return new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4);
  return new Float32Array(bytes.slice().buffer);
}
