/**
 * The browser shell's WebSocket handshake, before any RPC: the client's first message carries the access
 * token; the server answers `ready` or closes with one of these codes. The renderer keeps a copy of these
 * few constants (renderer/src/api/wsTransport.ts) because it may not import shell code.
 */
export const WS_PATH = '/api';

export const WS_CLOSE = {
  goingAway: 1001,
  malformed: 4400,
  unauthorized: 4401,
  authTimeout: 4408,
} as const;

export interface WsAuthMessage {
  kind: 'auth';
  token: string;
}

export interface WsReadyMessage {
  kind: 'ready';
  shell: 'web';
}
