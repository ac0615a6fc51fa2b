import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

/**
 * Where the built renderer (renderer/dist) is. The shells run from dist/launch.cjs, dist/electron/main.cjs
 * or from source under tsx; we walk up from the bundle's folder (or the working directory) to the
 * folder that holds renderer/dist/index.html.
 */
export function findRendererDist(): string {
  const starts = [typeof __dirname === 'string' ? __dirname : undefined, process.cwd()].filter((s): s is string => !!s);
  for (const start of starts) {
    let dir = resolve(start);
    for (;;) {
      const candidate = join(dir, 'renderer', 'dist');
      if (existsSync(join(candidate, 'index.html'))) return candidate;
      const parent = dirname(dir);
      if (parent === dir) break;
      dir = parent;
    }
  }
  throw new Error('The studio renderer is not built (renderer/dist/index.html not found). Run `npm run build` first.');
}
