import { randomBytes } from 'node:crypto';
import { connect, type Socket } from 'node:net';

/**
 * A hostile crowd for a Shoal listener: many connections that never authenticate, each misbehaving in
 * one of several ways (silence, garbage, absurd length prefixes, a trickle of bytes, frames with made-up
 * tags, a header that is not an object, a wrong proof). It counts how the listener ended each one.
 */
export const FLOOD_KINDS = ['silent', 'garbage', 'oversized', 'slow', 'tagSpam', 'nullHeader', 'wrongProof'] as const;
export type FloodKind = (typeof FLOOD_KINDS)[number];

export interface FloodResult {
  opened: number;
  /** Connections the listener closed (all of them, once the flood is over). */
  closedByListener: number;
  /** Bytes the flood managed to write, in all. */
  bytesWritten: number;
}

function frame(header: object, payloadLength = 0): Buffer {
  const json = Buffer.from(JSON.stringify(header));
  const prefix = Buffer.alloc(8);
  prefix.writeUInt32BE(json.length, 0);
  prefix.writeUInt32BE(payloadLength, 4);
  return Buffer.concat([prefix, json]);
}

function rawFrame(headerText: string): Buffer {
  const json = Buffer.from(headerText);
  const prefix = Buffer.alloc(8);
  prefix.writeUInt32BE(json.length, 0);
  return Buffer.concat([prefix, json]);
}

/** Play one kind of misbehaviour on a connected socket until the listener closes it. */
function misbehave(socket: Socket, kind: FloodKind, wrote: (n: number) => void): void {
  const write = (bytes: Buffer) => {
    if (socket.destroyed || !socket.writable) return;
    wrote(bytes.length);
    socket.write(bytes);
  };
  switch (kind) {
    case 'silent':
      return;
    case 'garbage':
      return write(randomBytes(64 << 10));
    case 'oversized': {
      // The attack: announce 400 MiB, then keep sending.
      const prefix = Buffer.alloc(8);
      prefix.writeUInt32BE(16, 0);
      prefix.writeUInt32BE(400 << 20, 4);
      write(prefix);
      const chunk = Buffer.alloc(256 << 10);
      for (let i = 0; i < 16; i++) write(chunk);
      return;
    }
    case 'slow': {
      const bytes = frame({ type: 'auth', tag: '__handshake', protocol: 3, proof: 'x'.repeat(64), nonce: 'y'.repeat(64) });
      let at = 0;
      const timer = setInterval(() => (at < bytes.length ? write(bytes.subarray(at, ++at)) : clearInterval(timer)), 200);
      socket.once('close', () => clearInterval(timer));
      return;
    }
    case 'tagSpam':
      return write(Buffer.concat(Array.from({ length: 4000 }, (_, i) => frame({ type: 'x', tag: `spam-${i}` }))));
    case 'nullHeader':
      return write(Buffer.concat([rawFrame('null'), rawFrame('[1,2]'), rawFrame('{"tag":5}')]));
    case 'wrongProof':
      return write(frame({ type: 'auth', tag: '__handshake', protocol: 3, proof: 'f'.repeat(64), nonce: 'n'.repeat(64) }));
  }
}

/**
 * Open `count` connections to the targets (round robin), from `sources` loopback addresses in turn,
 * each one of FLOOD_KINDS in turn; resolves once the listeners have closed every one, or after
 * `giveUpMs` (the rest are then destroyed here and not counted as closed by the listener).
 */
export async function flood(targets: { host: string; port: number }[], count: number, sources: string[], giveUpMs: number): Promise<FloodResult> {
  let bytesWritten = 0;
  const giveUps: (() => void)[] = [];
  const ends: Promise<boolean>[] = [];
  for (let i = 0; i < count; i++) {
    const target = targets[i % targets.length];
    const kind = FLOOD_KINDS[i % FLOOD_KINDS.length];
    const socket = connect({ host: target.host, port: target.port, localAddress: sources[i % sources.length] });
    socket.on('error', () => {});
    socket.on('data', () => {});
    socket.once('connect', () => misbehave(socket, kind, (n) => (bytesWritten += n)));
    let mine = false;
    ends.push(new Promise<boolean>((resolve) => socket.once('close', () => resolve(!mine))));
    giveUps.push(() => {
      mine = true;
      socket.destroy();
    });
  }
  const timer = setTimeout(() => giveUps.forEach((giveUp) => giveUp()), giveUpMs);
  const closed = await Promise.all(ends);
  clearTimeout(timer);
  return { opened: count, closedByListener: closed.filter(Boolean).length, bytesWritten };
}
