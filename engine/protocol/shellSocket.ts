/**
 * The browser shell's WebSocket handshake, before any RPC: the client's first message carries the access
 * token; the server answers `ready` or closes with one of these codes. Shared by the shell
 * (electron/webServer.ts) and the renderer (renderer/src/api/wsTransport.ts).
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

/** What the renderer tells the user for each close code. */
export const WS_CLOSE_REASONS: Record<number, string> = {
  [WS_CLOSE.malformed]: 'the studio received a malformed message',
  [WS_CLOSE.unauthorized]: 'the access token is missing or wrong — open the exact URL the studio printed',
  [WS_CLOSE.authTimeout]: 'the access token was not sent in time',
  [WS_CLOSE.goingAway]: 'the studio shut down',
};
