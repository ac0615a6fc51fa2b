import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, type Server, type Socket } from 'node:net';
import { HandshakeFrameSchema, PROTOCOL_VERSION, protocolMismatch, protocolOf, type HandshakeFrame } from '../protocol/handshake.js';
import { parseHeader } from '../protocol/wireHeader.js';
import { Admission, type AdmissionLimits } from './admission.js';
import { encodeFrame, HANDSHAKE_MAX_FRAME_BYTES, type Message } from './frame.js';
import { Connection, type IncomingLimit } from './connection.js';
import { adoptRouted, connectRouted } from './readRouter.js';
import { RefusalLog } from './refusalLog.js';

/**
 * Mutual challenge–response on every socket, keyed by the job secret. Neither side ever sends the
 * secret: each proves it knows it by an HMAC over a fresh nonce from the other side. A peer without
 * the secret learns nothing and is disconnected. Both sides also say which wire protocol they speak
 * (PROTOCOL_VERSION) and refuse another, before any job message is exchanged.
 *
 * Until a peer has proved the secret it gets almost nothing: frames of HANDSHAKE_MAX_FRAME_BYTES,
 * HANDSHAKE_BUDGET_BYTES in all, HANDSHAKE_DEADLINE_MS to finish, and a slot among a capped number of
 * unauthenticated sockets (admission.ts). Listeners of the coordinator and of every agent use this.
 */
const TAG = '__handshake';
const TIMEOUT_MS = 10_000;
/** From accept to a proved secret: a slow or silent peer loses its socket (and its slot) after this. */
export const HANDSHAKE_DEADLINE_MS = 10_000;
/** All an unauthenticated peer may send: its handshake frames, with room to spare. */
export const HANDSHAKE_BUDGET_BYTES = 4 * HANDSHAKE_MAX_FRAME_BYTES;
const HANDSHAKE_LIMIT: IncomingLimit = { maxFrameBytes: HANDSHAKE_MAX_FRAME_BYTES, maxTotalBytes: HANDSHAKE_BUDGET_BYTES };
/** How long a dialler keeps retrying a listener that answered "busy" (its unauthenticated slots were full). */
const BUSY_RETRY_MS = 30_000;

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

/** A handshake frame, its version checked first where it carries one (an older peer's frames may lack fields this one has). */
function handshakeFrame(message: Message, peer: string): HandshakeFrame {
  const type = message.header.type;
  const theirs = protocolOf(message.header);
  if ((type === 'challenge' || type === 'auth') && theirs !== PROTOCOL_VERSION) throw new Error(protocolMismatch(peer, theirs));
  return parseHeader(HandshakeFrameSchema, message.header, peer);
}

function send(conn: Connection, frame: HandshakeFrame): void {
  conn.send({ ...frame, tag: TAG });
}

/** A listener whose unauthenticated slots were full; the dialler tries again. */
class BusyListener extends Error {}

/** Turn away a socket over the admission caps without reading from it: a refusal a real dialler understands, then close. */
function refuseBusy(socket: Socket, message: string): void {
  socket.on('error', () => {});
  socket.end(Buffer.concat(encodeFrame({ header: { type: 'refused', tag: TAG, message, busy: true } })), () => socket.destroy());
  setTimeout(() => socket.destroy(), 1000).unref();
}

export interface ListenOptions {
  admission?: AdmissionLimits;
  deadlineMs?: number;
}

/**
 * Listen for authenticated connections; `onRefused` is told who failed and why (for the log; a flood
 * is summarised rather than logged line by line, refusalLog.ts).
 */
export function listenAuthenticated(
  host: string,
  port: number,
  secret: string,
  onConnection: (conn: Connection, hello: Hello) => void,
  onRefused: (peer: string, reason: string) => void,
  options: ListenOptions = {},
): Promise<Server> {
  const admission = new Admission(options.admission);
  const refusals = new RefusalLog(onRefused);
  const deadlineMs = options.deadlineMs ?? HANDSHAKE_DEADLINE_MS;
  // Paused on connect: nothing may be read before the socket is given routed reads (readRouter.ts).
  const server = createServer({ pauseOnConnect: true }, (accepted) => {
    const address = accepted.remoteAddress ?? 'an unknown address';
    const peer = `${address}:${accepted.remotePort}`;
    const release = admission.admit(address);
    if (typeof release === 'string') {
      refusals.note(peer, release);
      return refuseBusy(accepted, release);
    }
    const { socket, router } = adoptRouted(accepted);
    const conn = new Connection(socket, peer, router, HANDSHAKE_LIMIT);
    const nonce = randomBytes(32).toString('hex');
    let deadline: ReturnType<typeof setTimeout> | undefined;
    const overdue = new Promise<never>((_resolve, reject) => {
      deadline = setTimeout(() => reject(new Error(`no authentication within ${deadlineMs / 1000} s`)), deadlineMs);
    });
    const next = () => Promise.race([conn.receive(TAG), overdue]);
    const run = async () => {
      send(conn, { type: 'challenge', protocol: PROTOCOL_VERSION, nonce });
      const reply = await next();
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
      // Proved: the slot is free for the next peer, and frames of any size may follow.
      release();
      conn.acceptLargeFrames();
      send(conn, { type: 'welcome', proof: proof(secret, 'server', auth.nonce) });
      const hello = handshakeFrame(await next(), peer);
      if (hello.type !== 'hello') throw new Error(`expected the handshake's "hello", got "${hello.type}"`);
      return hello.hello;
    };
    run().then(
      (hello) => {
        clearTimeout(deadline);
        onConnection(conn, hello);
      },
      (err: Error) => {
        clearTimeout(deadline);
        release();
        refusals.note(peer, err.message.replace(`Connection to ${peer} failed: `, ''));
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

/**
 * Connect to an authenticated listener, proving the secret and checking that the server knows it too.
 * A listener busy with other unauthenticated sockets (a flood, or hundreds of agents joining at once)
 * is tried again, with growing pauses, for up to BUSY_RETRY_MS.
 */
export async function connectAuthenticated(host: string, port: number, secret: string, hello: Hello): Promise<Connection> {
  const giveUp = Date.now() + BUSY_RETRY_MS;
  for (let attempt = 0; ; attempt++) {
    try {
      return await dialOnce(host, port, secret, hello);
    } catch (err) {
      if (!(err instanceof BusyListener)) throw err;
      if (Date.now() >= giveUp) throw new Error(`${host}:${port} stayed too busy to authenticate this connection for ${BUSY_RETRY_MS / 1000} s (${err.message}).`);
      const pause = Math.min(1000, 50 * 2 ** attempt) * (0.5 + Math.random());
      await new Promise((resolve) => setTimeout(resolve, pause));
    }
  }
}

async function dialOnce(host: string, port: number, secret: string, hello: Hello): Promise<Connection> {
  const { socket, router } = connectRouted(port, host);
  await withTimeout(
    new Promise<void>((resolve, reject) => {
      socket.once('connect', () => resolve());
      socket.once('error', (err) => reject(new Error(`Cannot connect to ${host}:${port}: ${err.message}`)));
    }),
    `Connecting to ${host}:${port}`,
  );
  const where = `${host}:${port}`;
  // The listener has not proved the secret either: it gets the same small limits until it has.
  const conn = new Connection(socket, where, router, HANDSHAKE_LIMIT);
  const nonce = randomBytes(32).toString('hex');
  let welcome: HandshakeFrame;
  try {
    const challenge = handshakeFrame(await withTimeout(conn.receive(TAG), `Handshake with ${where}`), where);
    if (challenge.type === 'refused') throw challenge.busy ? new BusyListener(challenge.message) : new Error(`${where} refused the connection: ${challenge.message}`);
    if (challenge.type !== 'challenge') throw new Error(`${where} did not open the handshake with a challenge (got "${challenge.type}").`);
    send(conn, { type: 'auth', protocol: PROTOCOL_VERSION, proof: proof(secret, 'client', challenge.nonce), nonce });
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
  conn.acceptLargeFrames();
  send(conn, { type: 'hello', hello });
  return conn;
}
