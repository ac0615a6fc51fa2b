import { contextBridge, ipcRenderer } from 'electron';
import type { IpcRendererEvent } from 'electron';
import type { RpcEvent, RpcResult, StudioMethod } from '../engine/protocol/studioApi.js';
import { IPC } from './ipcChannels.js';

/**
 * The sandboxed preload: exposes `window.shoal`, the same call/subscribe transport the browser shell
 * offers over its WebSocket. It forwards plain data only; the main process validates sender and payload.
 */
let nextId = 1;

const bridge = {
  shell: 'electron' as const,
  call(method: StudioMethod, params: unknown[]): Promise<RpcResult> {
    return ipcRenderer.invoke(IPC.call, { kind: 'call', id: nextId++, method, params }) as Promise<RpcResult>;
  },
  /** The native open dialog for the Data section: the main process shows it and returns the path (or null). */
  pickDataPath(what: 'file' | 'folder'): Promise<string | null> {
    return ipcRenderer.invoke(IPC.pickDataPath, what === 'folder' ? 'folder' : 'file') as Promise<string | null>;
  },
  subscribe(listener: (message: RpcEvent) => void): () => void {
    const forward = (_event: IpcRendererEvent, message: RpcEvent) => listener(message);
    ipcRenderer.on(IPC.event, forward);
    ipcRenderer.send(IPC.subscribe);
    return () => {
      ipcRenderer.removeListener(IPC.event, forward);
    };
  },
};

contextBridge.exposeInMainWorld('shoal', bridge);
