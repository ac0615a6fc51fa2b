import { createReadStream, promises as fs } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { extname, resolve, sep } from 'node:path';

/** Serves the built renderer read-only: GET/HEAD only, no directory listing, no path outside `root`. */
const MIME: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.wasm': 'application/wasm',
  '.txt': 'text/plain; charset=utf-8',
};

export function securityHeaders(csp: string): Record<string, string> {
  return {
    'Content-Security-Policy': csp,
    'X-Content-Type-Options': 'nosniff',
    'X-Frame-Options': 'DENY',
    'Referrer-Policy': 'no-referrer',
    'Cross-Origin-Opener-Policy': 'same-origin',
    'Cross-Origin-Resource-Policy': 'same-origin',
    'Permissions-Policy': 'camera=(), microphone=(), geolocation=()',
  };
}

function plain(res: ServerResponse, status: number, text: string, headers: Record<string, string>): void {
  res.writeHead(status, { ...headers, 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': 'no-store' });
  res.end(text);
}

/** Map a URL path to a file under root, or null when it is malformed or escapes root. */
export function safeFilePath(root: string, urlPath: string): string | null {
  let pathname: string;
  try {
    pathname = decodeURIComponent(urlPath.split('?')[0].split('#')[0]);
  } catch {
    return null;
  }
  if (pathname.includes('\0') || pathname.includes('\\') || !pathname.startsWith('/')) return null;
  if (pathname.split('/').some((part) => part === '..')) return null;
  if (pathname.endsWith('/')) pathname += 'index.html';
  const file = resolve(root, `.${pathname}`);
  return file.startsWith(root + sep) ? file : null;
}

export function createStaticHandler(rootDir: string, csp: string) {
  const root = resolve(rootDir);
  const headers = securityHeaders(csp);
  let realRoot: Promise<string> | undefined;
  return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('Allow', 'GET, HEAD');
      return plain(res, 405, 'Method not allowed.', headers);
    }
    const file = safeFilePath(root, req.url ?? '/');
    if (!file) return plain(res, 400, 'Bad path.', headers);
    try {
      realRoot ??= fs.realpath(root);
      const real = await fs.realpath(file);
      if (!real.startsWith((await realRoot) + sep)) return plain(res, 404, 'Not found.', headers);
      const stat = await fs.stat(real);
      if (!stat.isFile()) return plain(res, 404, 'Not found.', headers);
      res.writeHead(200, {
        ...headers,
        'Content-Type': MIME[extname(real).toLowerCase()] ?? 'application/octet-stream',
        'Content-Length': String(stat.size),
        'Cache-Control': real.endsWith('.html') ? 'no-store' : 'no-cache',
      });
      if (req.method === 'HEAD') return void res.end();
      createReadStream(real).on('error', () => res.destroy()).pipe(res);
    } catch {
      plain(res, 404, 'Not found.', headers);
    }
  };
}
