import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, type Server } from 'node:net';
import { HandshakeFrameSchema, PROTOCOL_VERSION, protocolMismatch, protocolOf, type HandshakeFrame } from '../protocol/handshake.js';
import { parseHeader } from '../protocol/wireHeader.js';
import type { Message } from './frame.js';
import { Connection } from './connection.js';
import { adoptRouted, connectRouted } from './readRouter.js';

/**
 * Mutual challenge–response on every socket, keyed by the job secret. Neither side ever sends the
 * secret: each proves it knows it by an HMAC over a fresh nonce from the other side. A peer without
 * the secret learns nothing and is disconnected. Both sides also say which wire protocol they speak
 * (PROTOCOL_VERSION) and refuse another, before any job message is exchanged.
 */
const TAG = '__handshake';
const TIMEOUT_MS = 10_000;

function proof(secret: string, role: 'client' | 'server', nonce: string): string {
  return createHmac('sha256', secret).update(`${role}:${nonce}`).digest('hex');
}

function sameProof(a: unknown, b: string): boolean {
  if (typeof a !== 'string' || a.length !== b.length) return false;
  return timingSafeEqual(Buffer.from(a), Buffer.from(b));
}

function withTimeout<T>(promise: Promise<T>, what: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what} timed out after ${TIMEOUT_MS / 1000} s.`)), TIMEOUT_MS);
    promise.then(
      (v) => (clearTimeout(timer), resolve(v)),
      (e) => (clearTimeout(timer), reject(e)),
    );
  });
}

export type Hello = Record<string, unknown>;

/** A handshake frame, its version checked first (an older peer's frames may lack fields this one has). */
function handshakeFrame(message: Message, peer: string): HandshakeFrame {
  const theirs = protocolOf(message.header);
  if (message.header.type !== 'refused' && message.header.type !== 'welcome' && theirs !== PROTOCOL_VERSION) throw new Error(protocolMismatch(peer, theirs));
  return parseHeader(HandshakeFrameSchema, message.header, peer);
}

function send(conn: Connection, frame: HandshakeFrame): void {
  conn.send({ ...frame, tag: TAG });
}

/** Listen for authenticated connections; `onRefused` is told who failed and why (for the log). */
export function listenAuthenticated(
  host: string,
  port: number,
  secret: string,
  onConnection: (conn: Connection, hello: Hello) => void,
  onRefused: (peer: string, reason: string) => void,
): Promise<Server> {
  // Paused on connect: nothing may be read before the socket is given routed reads (readRouter.ts).
  const server = createServer({ pauseOnConnect: true }, (accepted) => {
    const peer = `${accepted.remoteAddress}:${accepted.remotePort}`;
    const { socket, router } = adoptRouted(accepted);
    const conn = new Connection(socket, peer, router);
    const nonce = randomBytes(32).toString('hex');
    const run = async () => {
      send(conn, { type: 'challenge', protocol: PROTOCOL_VERSION, nonce });
      const reply = await withTimeout(conn.receive(TAG), `Handshake with ${peer}`);
      let auth: HandshakeFrame;
      try {
        auth = handshakeFrame(reply, peer);
      } catch (err) {
        // Said to the dialler too: a newer one prints it; an older one at least sees the refusal.
        if (!conn.closed) send(conn, { type: 'refused', message: (err as Error).message });
        throw err;
      }
      if (auth.type !== 'auth') throw new Error(`expected the handshake's "auth", got "${auth.type}"`);
      if (!sameProof(auth.proof, proof(secret, 'client', nonce))) {
        throw new Error('wrong job secret');
      }
      send(conn, { type: 'welcome', proof: proof(secret, 'server', auth.nonce) });
      return auth.hello;
    };
    run().then(
      (hello) => onConnection(conn, hello),
      (err: Error) => {
        onRefused(peer, err.message);
        // Ended, not destroyed at once, so that a refusal just sent reaches the dialler.
        socket.end();
        setTimeout(() => socket.destroy(), 1000).unref();
      },
    );
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve(server));
  });
}

/** Connect to an authenticated listener, proving the secret and checking that the server knows it too. */
export async function connectAuthenticated(host: string, port: number, secret: string, hello: Hello): Promise<Connection> {
  const { socket, router } = connectRouted(port, host);
  await withTimeout(
    new Promise<void>((resolve, reject) => {
      socket.once('connect', () => resolve());
      socket.once('error', (err) => reject(new Error(`Cannot connect to ${host}:${port}: ${err.message}`)));
    }),
    `Connecting to ${host}:${port}`,
  );
  const where = `${host}:${port}`;
  const conn = new Connection(socket, where, router);
  const nonce = randomBytes(32).toString('hex');
  let welcome: HandshakeFrame;
  try {
    const challenge = handshakeFrame(await withTimeout(conn.receive(TAG), `Handshake with ${where}`), where);
    if (challenge.type !== 'challenge') throw new Error(`${where} did not open the handshake with a challenge (got "${challenge.type}").`);
    send(conn, { type: 'auth', protocol: PROTOCOL_VERSION, proof: proof(secret, 'client', challenge.nonce), nonce, hello });
  } catch (err) {
    socket.destroy();
    throw err;
  }
  try {
    welcome = handshakeFrame(await withTimeout(conn.receive(TAG), `Handshake with ${where}`), where);
  } catch {
    socket.destroy();
    throw new Error(`${where} refused the job secret (or closed the connection during the handshake).`);
  }
  if (welcome.type === 'refused') {
    socket.destroy();
    throw new Error(`${where} refused the connection: ${welcome.message}`);
  }
  if (welcome.type !== 'welcome' || !sameProof(welcome.proof, proof(secret, 'server', nonce))) {
    socket.destroy();
    throw new Error(`${where} does not know the job secret; refusing to talk to it.`);
  }
  return conn;
}
