import { app, BrowserWindow, dialog, ipcMain, session } from 'electron';
import type { WebContents, WebFrameMain } from 'electron';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createStudioService } from '../engine/node/api.js';
import { IPC } from './ipcChannels.js';
import { findRendererDist } from './rendererDir.js';
import { dispatchCall, forwardStreams } from './rpcDispatch.js';

/**
 * The Electron shell: one sandboxed, context-isolated window showing the built renderer from file://,
 * and the StudioApi over IPC. Every IPC message is checked to come from that page's main frame; every
 * payload is parsed with zod (in dispatchCall). Navigation, new windows, webviews and permissions are denied.
 */
app.enableSandbox();
// One studio per user: a second launch focuses the first window instead of starting a second job service.
if (!app.requestSingleInstanceLock()) app.exit(0);
app.on('second-instance', () => {
  const [window] = BrowserWindow.getAllWindows();
  if (window?.isMinimized()) window.restore();
  window?.focus();
});
const rendererIndex = join(findRendererDist(), 'index.html');
const rendererUrl = pathToFileURL(rendererIndex).href;
const service = createStudioService({ shell: 'electron' });
const subscribers = new Set<WebContents>();

function isOwnFrame(frame: WebFrameMain | null | undefined): boolean {
  if (!frame || frame.parent !== null) return false;
  try {
    const url = new URL(frame.url);
    return url.protocol === 'file:' && url.host === '' && `file://${url.pathname}` === rendererUrl;
  } catch {
    return false;
  }
}

ipcMain.handle(IPC.call, async (event, payload: unknown) => {
  if (!isOwnFrame(event.senderFrame)) throw new Error('Refused: the request did not come from the studio window.');
  return dispatchCall(service, payload);
});

// The Data section's picker: the renderer gets the path the user chose, never a listing of the disk.
ipcMain.handle(IPC.pickDataPath, async (event, what: unknown) => {
  if (!isOwnFrame(event.senderFrame)) throw new Error('Refused: the request did not come from the studio window.');
  const window = BrowserWindow.fromWebContents(event.sender);
  const options: Electron.OpenDialogOptions = what === 'folder'
    ? { title: 'Data folder', properties: ['openDirectory'] }
    : { title: 'Data file', properties: ['openFile'], filters: [{ name: 'Data', extensions: ['csv', 'tsv', 'tab', 'jsonl', 'ndjson', 'npz', 'json'] }, { name: 'All files', extensions: ['*'] }] };
  const result = window ? await dialog.showOpenDialog(window, options) : await dialog.showOpenDialog(options);
  return result.canceled ? null : (result.filePaths[0] ?? null);
});

ipcMain.on(IPC.subscribe, (event) => {
  if (!isOwnFrame(event.senderFrame)) return;
  const contents = event.sender;
  if (subscribers.has(contents)) return;
  subscribers.add(contents);
  contents.once('destroyed', () => subscribers.delete(contents));
});

forwardStreams(service, (message) => {
  for (const contents of subscribers) if (!contents.isDestroyed()) contents.send(IPC.event, message);
});

app.on('web-contents-created', (_event, contents) => {
  contents.on('will-navigate', (e) => e.preventDefault());
  contents.on('will-redirect', (e) => e.preventDefault());
  contents.on('will-attach-webview', (e) => e.preventDefault());
  contents.setWindowOpenHandler(() => ({ action: 'deny' }));
});

function createWindow(): void {
  const window = new BrowserWindow({
    width: 1440,
    height: 900,
    title: 'Shoal',
    backgroundColor: '#0f1419',
    webPreferences: {
      preload: join(__dirname, 'preload.cjs'),
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      nodeIntegrationInWorker: false,
      webSecurity: true,
      allowRunningInsecureContent: false,
      webviewTag: false,
      spellcheck: false,
    },
  });
  window.removeMenu();
  void window.loadFile(rendererIndex);
}

let shuttingDown = false;
async function shutdown(): Promise<void> {
  if (shuttingDown) return;
  shuttingDown = true;
  await service.close().catch((error: unknown) => console.error(`shoal: stopping the job service failed: ${String(error)}`));
  app.exit(0);
}

void app.whenReady().then(() => {
  session.defaultSession.setPermissionRequestHandler((_contents, _permission, callback) => callback(false));
  session.defaultSession.setPermissionCheckHandler(() => false);
  createWindow();
  app.on('activate', () => {
    if (BrowserWindow.getAllWindows().length === 0) createWindow();
  });
});

app.on('window-all-closed', () => void shutdown());
app.on('before-quit', (event) => {
  if (!shuttingDown) {
    event.preventDefault();
    void shutdown();
  }
});
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => void shutdown());
