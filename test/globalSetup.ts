import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

/** Integration tests start the real bundled agent: build the Node bundles first (esbuild, ~2 s). */
export default function setup(): void {
  execFileSync(process.execPath, [join(__dirname, '..', 'scripts', 'build.mjs'), '--node'], { stdio: 'inherit' });
}
