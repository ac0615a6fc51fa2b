import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, type Server } from 'node:net';
import { Connection } from './connection.js';
import { adoptRouted, connectRouted } from './readRouter.js';

/**
 * Mutual challenge–response on every socket, keyed by the job secret. Neither side ever sends the
 * secret: each proves it knows it by an HMAC over a fresh nonce from the other side. A peer without
 * the secret learns nothing and is disconnected.
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
      conn.send({ type: 'challenge', tag: TAG, nonce });
      const reply = await withTimeout(conn.receive(TAG), `Handshake with ${peer}`);
      if (!sameProof(reply.header.proof, proof(secret, 'client', nonce))) {
        throw new Error('wrong job secret');
      }
      conn.send({ type: 'welcome', tag: TAG, proof: proof(secret, 'server', String(reply.header.nonce)) });
      return (reply.header.hello ?? {}) as Hello;
    };
    run().then(
      (hello) => onConnection(conn, hello),
      (err: Error) => {
        onRefused(peer, err.message);
        socket.destroy();
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
  const conn = new Connection(socket, `${host}:${port}`, router);
  const challenge = await withTimeout(conn.receive(TAG), `Handshake with ${host}:${port}`);
  const nonce = randomBytes(32).toString('hex');
  conn.send({ type: 'auth', tag: TAG, proof: proof(secret, 'client', String(challenge.header.nonce)), nonce, hello });
  let welcome;
  try {
    welcome = await withTimeout(conn.receive(TAG), `Handshake with ${host}:${port}`);
  } catch {
    socket.destroy();
    throw new Error(`${host}:${port} refused the job secret (or closed the connection during the handshake).`);
  }
  if (!sameProof(welcome.header.proof, proof(secret, 'server', nonce))) {
    socket.destroy();
    throw new Error(`${host}:${port} does not know the job secret; refusing to talk to it.`);
  }
  return conn;
}
