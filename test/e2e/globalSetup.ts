import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

/** Build the shells and the renderer once before the end-to-end tests, so they never test stale files. */
export default function globalSetup(): void {
  const root = process.cwd();
  if (process.env.SHOAL_E2E_NO_BUILD === '1') {
    for (const file of ['dist/launch.cjs', 'renderer/dist/index.html']) {
      if (!existsSync(join(root, file))) throw new Error(`SHOAL_E2E_NO_BUILD=1 but ${file} is missing: run \`npm run build\` first.`);
    }
    return;
  }
  execFileSync(process.execPath, ['scripts/build.mjs'], { cwd: root, stdio: 'inherit' });
}
