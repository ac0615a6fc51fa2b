import type { RpcEvent, RpcResult, RpcServerMessage, StudioMethod } from '../../../engine/protocol/studioApi';
import { WS_CLOSE_REASONS, WS_PATH, type WsAuthMessage, type WsReadyMessage } from '../../../engine/protocol/shellSocket';
import type { Transport } from './transport';

/**
 * The browser shell's transport: a WebSocket to /api on the page's own origin. The first message carries
 * the access token; the server answers `ready` or closes the socket with a 44xx code.
 */
function describeClose(event: CloseEvent): string {
  return WS_CLOSE_REASONS[event.code] ?? (event.reason || `the connection closed (code ${event.code})`);
}

export function connectWebSocket(token: string, origin: string = window.location.origin): Promise<Transport> {
  const url = `${origin.replace(/^http/, 'ws')}${WS_PATH}`;
  const socket = new WebSocket(url);
  const pending = new Map<number, (result: RpcResult) => void>();
  const listeners = new Set<(message: RpcEvent) => void>();
  const closeListeners = new Set<(reason: string) => void>();
  let nextId = 1;

  return new Promise<Transport>((resolve, reject) => {
    let ready = false;
    const transport: Transport = {
      shell: 'web',
      call(method: StudioMethod, params: unknown[]) {
        if (socket.readyState !== WebSocket.OPEN) return Promise.reject(new Error('Not connected to the studio. Reload the page.'));
        const id = nextId++;
        return new Promise<RpcResult>((done) => {
          pending.set(id, done);
          socket.send(JSON.stringify({ kind: 'call', id, method, params }));
        });
      },
      subscribe(listener) {
        listeners.add(listener);
        return () => listeners.delete(listener);
      },
      onClose(listener) {
        closeListeners.add(listener);
      },
    };

    socket.addEventListener('open', () => socket.send(JSON.stringify({ kind: 'auth', token } satisfies WsAuthMessage)));
    socket.addEventListener('message', (event: MessageEvent<string>) => {
      // The server is the studio's own Node process; its messages follow RpcServerMessage.
      const message = JSON.parse(event.data) as RpcServerMessage | WsReadyMessage;
      if (message.kind === 'ready') {
        ready = true;
        resolve(transport);
      } else if (message.kind === 'result') {
        pending.get(message.id)?.(message);
        pending.delete(message.id);
      } else if (message.kind === 'event') {
        for (const listener of listeners) listener(message);
      }
    });
    socket.addEventListener('close', (event) => {
      const reason = describeClose(event);
      for (const done of pending.values()) done({ kind: 'result', id: -1, ok: false, error: `Lost the connection: ${reason}.` });
      pending.clear();
      if (!ready) reject(new Error(`Could not connect to the studio: ${reason}.`));
      else for (const listener of closeListeners) listener(reason);
    });
  });
}
