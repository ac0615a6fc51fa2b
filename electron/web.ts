import { createStudioService } from '../engine/node/api.js';
import type { StudioApi } from '../engine/protocol/studioApi.js';
import { findRendererDist } from './rendererDir.js';
import { serveStudio } from './webServer.js';

export interface WebShellOptions {
  host: '127.0.0.1';
  /** 0 or absent: a random free port. */
  port?: number;
  /** Serve this service instead of creating one (tests); the shell then leaves closing it to the caller. */
  service?: StudioApi;
  staticDir?: string;
}

export interface WebShell {
  url: string;
  token: string;
  close(): Promise<void>;
}

/**
 * The browser shell: the studio in any browser, served from 127.0.0.1 with a one-time access token.
 * `close()` stops the server and, when the shell created the job service, the service and its jobs.
 */
export async function startWebShell(options: WebShellOptions): Promise<WebShell> {
  const owned = options.service ? undefined : createStudioService({ shell: 'web' });
  const service = options.service ?? owned!;
  try {
    const shell = await serveStudio({ service, host: options.host, port: options.port, staticDir: options.staticDir ?? findRendererDist() });
    return {
      url: shell.url,
      token: shell.token,
      close: async () => {
        await shell.close();
        await owned?.close();
      },
    };
  } catch (error) {
    await owned?.close();
    throw error;
  }
}
