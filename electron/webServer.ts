import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';
import type { IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { WebSocket, WebSocketServer } from 'ws';
import type { RpcServerMessage, StudioApi } from '../engine/protocol/studioApi.js';
import { MAX_RPC_MESSAGE_BYTES } from '../engine/protocol/modelImport.js';
import { contentSecurityPolicy } from './csp.js';
import { dispatchCall, forwardStreams } from './rpcDispatch.js';
import { createStaticHandler } from './staticFiles.js';
import { WS_CLOSE, WS_PATH, type WsAuthMessage, type WsReadyMessage } from '../engine/protocol/shellSocket.js';

export interface ServeStudioOptions {
  service: StudioApi;
  host: '127.0.0.1';
  /** 0 or absent: a free port chosen by the OS. */
  port?: number;
  /** The built renderer folder (renderer/dist). */
  staticDir: string;
  /** How long a new socket may take to send its token. */
  authTimeoutMs?: number;
}

export interface RunningShell {
  /** The page to open: http://127.0.0.1:PORT/#token=… (the token stays in the fragment, off the wire). */
  url: string;
  origin: string;
  token: string;
  port: number;
  close(): Promise<void>;
}

const digest = (text: string) => createHash('sha256').update(text, 'utf8').digest();

/**
 * What a socket may send before it has presented the access token (the auth message is ~100 bytes):
 * nothing unauthenticated costs more. The same rule as the job's wire (engine/wire/handshake.ts).
 */
export const UNAUTHENTICATED_MAX_BYTES = 4096;
/** Sockets that may be waiting to present the token at once; more are refused at the upgrade (503). */
export const MAX_UNAUTHENTICATED_SOCKETS = 64;

/**
 * Raise an authenticated socket's message limit to a model import's. ws takes one maxPayload per server
 * and keeps it in each socket's receiver (ws 8.18, pinned); the server's stays at 1 MiB for sockets that
 * have not authenticated (test/integration/webShellLimits.test.ts).
 */
function allowLargeMessages(ws: WebSocket): void {
  const receiver = (ws as unknown as { _receiver?: { _maxPayload: number } })._receiver;
  if (!receiver || typeof receiver._maxPayload !== 'number') throw new Error('ws changed: its receiver has no _maxPayload; update allowLargeMessages.');
  receiver._maxPayload = MAX_RPC_MESSAGE_BYTES;
}

/** Constant-time comparison of a presented token with the shell's token. */
export function tokenMatches(expected: string, presented: unknown): boolean {
  if (typeof presented !== 'string' || presented.length > 1024) return false;
  return timingSafeEqual(digest(expected), digest(presented));
}

function refuseUpgrade(socket: Duplex, status: number, reason: string): void {
  socket.end(`HTTP/1.1 ${status} ${reason}\r\nConnection: close\r\nContent-Type: text/plain\r\nContent-Length: ${reason.length}\r\n\r\n${reason}`);
}

/**
 * The browser shell's server: the renderer's static files plus the StudioApi over a WebSocket at /api.
 * A socket must come from our own origin and present the access token in its first message; until then
 * it can do nothing, and a wrong token closes it with 4401.
 */
export async function serveStudio(options: ServeStudioOptions): Promise<RunningShell> {
  const token = randomBytes(32).toString('base64url');
  const server = createServer();
  await new Promise<void>((resolvePromise, reject) => {
    const onError = (error: NodeJS.ErrnoException) =>
      reject(error.code === 'EADDRINUSE' ? new Error(`Port ${options.port} on ${options.host} is already in use: pick another with --port N, or --port 0 for any free port.`) : error);
    server.once('error', onError);
    server.listen(options.port ?? 0, options.host, () => {
      server.off('error', onError);
      resolvePromise();
    });
  });
  server.on('error', (error) => console.error(`shoal: the studio server failed: ${error.message}`));
  const port = (server.address() as AddressInfo).port;
  const origin = `http://${options.host}:${port}`;
  const ownHost = `${options.host}:${port}`;
  const csp = contentSecurityPolicy([`ws://${options.host}:${port}`]);
  const serveStatic = createStaticHandler(options.staticDir, csp);

  server.on('request', (req, res) => {
    // A foreign Host header means DNS rebinding or a confused proxy: refuse.
    if (req.headers.host !== ownHost) {
      res.writeHead(421, { 'Content-Type': 'text/plain' });
      return void res.end('Misdirected request.');
    }
    void serveStatic(req, res);
  });

  // A socket that has not presented the token may send 1 MiB at most; an authenticated one may send a
  // model import (model.json and its weights, base64), the one big request (see allowLargeMessages).
  const wss = new WebSocketServer({ noServer: true, maxPayload: UNAUTHENTICATED_MAX_BYTES });
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const path = (req.url ?? '').split('?')[0];
    if (path !== WS_PATH) return refuseUpgrade(socket, 404, 'Not Found');
    if (req.headers.origin !== origin || req.headers.host !== ownHost) {
      return refuseUpgrade(socket, 403, 'Forbidden');
    }
    if (unauthenticated >= MAX_UNAUTHENTICATED_SOCKETS) {
      console.error(`shoal: refused a studio socket from ${req.socket.remoteAddress}:${req.socket.remotePort}: ${unauthenticated} sockets are already waiting to present the access token.`);
      return refuseUpgrade(socket, 503, 'Too many sockets waiting for authentication');
    }
    wss.handleUpgrade(req, socket, head, (ws) => attach(ws));
  });

  let unauthenticated = 0;
  const attach = (ws: WebSocket) => {
    let unsubscribe: (() => void) | undefined;
    // Counted until the token is presented or the socket closes, whichever comes first.
    unauthenticated++;
    let counted = true;
    const leaveWaiting = () => {
      if (counted) unauthenticated--;
      counted = false;
    };
    const send = (message: RpcServerMessage | WsReadyMessage) => {
      if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify(message));
    };
    const timer = setTimeout(() => ws.close(WS_CLOSE.authTimeout, 'No access token was presented in time.'), options.authTimeoutMs ?? 10_000);
    // A frame over the limit, or bad framing: ws closes the socket itself (1009, 1002); an 'error'
    // without a listener would end the studio process instead.
    ws.on('error', () => ws.terminate());
    ws.on('close', () => {
      leaveWaiting();
      clearTimeout(timer);
      unsubscribe?.();
    });
    ws.on('message', (data, isBinary) => {
      let message: unknown;
      try {
        if (isBinary) throw new Error('binary');
        message = JSON.parse(data.toString());
      } catch {
        return ws.close(WS_CLOSE.malformed, 'Messages must be JSON text.');
      }
      if (!unsubscribe) {
        const auth = message as Partial<WsAuthMessage> | null;
        if (!auth || auth.kind !== 'auth' || !tokenMatches(token, auth.token)) {
          return ws.close(WS_CLOSE.unauthorized, 'Access token missing or wrong: open the URL the studio printed.');
        }
        clearTimeout(timer);
        leaveWaiting();
        allowLargeMessages(ws);
        unsubscribe = forwardStreams(options.service, send);
        return send({ kind: 'ready', shell: 'web' });
      }
      void dispatchCall(options.service, message).then(send);
    });
  };

  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      for (const client of wss.clients) client.close(WS_CLOSE.goingAway, 'The studio is shutting down.');
      wss.close();
      server.closeAllConnections();
      await new Promise<void>((done) => server.close(() => done()));
    })());

  return { url: `${origin}/#token=${token}`, origin, token, port, close };
}
