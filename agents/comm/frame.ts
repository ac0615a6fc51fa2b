/**
 * Wire framing: every message is [u32 header length][u32 payload length][header JSON][payload bytes].
 * The header is small JSON (type, tag, step…); the payload carries tensors as raw float32 bytes, so
 * large arrays cross the wire without text encoding.
 */
export interface Message {
  header: Record<string, unknown> & { type: string };
  payload?: Uint8Array;
}

const PREFIX = 8;
/** Guard against a corrupt or hostile length field allocating gigabytes. */
export const MAX_FRAME_BYTES = 1 << 30;

export function encodeFrame(message: Message): Buffer[] {
  const header = Buffer.from(JSON.stringify(message.header), 'utf8');
  const payloadLength = message.payload?.byteLength ?? 0;
  const prefix = Buffer.allocUnsafe(PREFIX);
  prefix.writeUInt32BE(header.length, 0);
  prefix.writeUInt32BE(payloadLength, 4);
  const parts: Buffer[] = [prefix, header];
  if (message.payload && payloadLength > 0) {
    parts.push(Buffer.from(message.payload.buffer, message.payload.byteOffset, payloadLength));
  }
  return parts;
}

/** Incremental decoder: feed it socket chunks, it returns the complete messages they finish. */
export class FrameDecoder {
  private chunks: Buffer[] = [];
  private buffered = 0;

  push(chunk: Buffer): Message[] {
    this.chunks.push(chunk);
    this.buffered += chunk.length;
    const out: Message[] = [];
    for (;;) {
      if (this.buffered < PREFIX) break;
      const prefix = this.peek(PREFIX);
      const headerLength = prefix.readUInt32BE(0);
      const payloadLength = prefix.readUInt32BE(4);
      if (headerLength + payloadLength > MAX_FRAME_BYTES) {
        throw new Error(`Frame of ${headerLength + payloadLength} bytes exceeds the ${MAX_FRAME_BYTES}-byte limit; the peer is not speaking Shoal's protocol.`);
      }
      const total = PREFIX + headerLength + payloadLength;
      if (this.buffered < total) break;
      const frame = this.take(total);
      const header = JSON.parse(frame.toString('utf8', PREFIX, PREFIX + headerLength)) as Message['header'];
      let payload: Uint8Array | undefined;
      if (payloadLength > 0) {
        // Copy into a fresh, aligned buffer so the receiver may view it as a Float32Array.
        payload = new Uint8Array(payloadLength);
        payload.set(frame.subarray(PREFIX + headerLength, total));
      }
      out.push({ header, payload });
    }
    return out;
  }

  private peek(n: number): Buffer {
    if (this.chunks[0].length >= n) return this.chunks[0].subarray(0, n);
    return Buffer.concat(this.chunks).subarray(0, n);
  }

  private take(n: number): Buffer {
    const all = this.chunks.length === 1 ? this.chunks[0] : Buffer.concat(this.chunks);
    const frame = all.subarray(0, n);
    const rest = all.subarray(n);
    this.chunks = rest.length > 0 ? [rest] : [];
    this.buffered = rest.length;
    return frame;
  }
}

export function floatsToBytes(values: Float32Array): Uint8Array {
  return new Uint8Array(values.buffer, values.byteOffset, values.byteLength);
}

export function bytesToFloats(bytes: Uint8Array | undefined): Float32Array {
  if (!bytes) return new Float32Array(0);
  if (bytes.byteOffset % 4 === 0) return new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4);
  return new Float32Array(bytes.slice().buffer);
}
