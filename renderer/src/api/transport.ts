import type { RpcEvent, RpcResult, StudioMethod } from '../../../engine/protocol/studioApi';

/**
 * How the renderer reaches the studio's Node side. Electron's preload exposes one as `window.shoal`
 * (IPC); in a browser the WebSocket transport implements the same two operations.
 */
export interface Transport {
  shell: 'electron' | 'web';
  call(method: StudioMethod, params: unknown[]): Promise<RpcResult>;
  subscribe(listener: (message: RpcEvent) => void): () => void;
  /** Called once when the connection is lost for good (the WebSocket transport only). */
  onClose?(listener: (reason: string) => void): void;
  /** Electron only: the native file picker for the Data section; the chosen path, or null when cancelled. */
  pickDataPath?(what: 'file' | 'folder'): Promise<string | null>;
}

declare global {
  interface Window {
    shoal?: Transport;
  }
}
