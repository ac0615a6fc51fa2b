import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

export type ElectronProbe =
  | { ok: true; binary: string }
  /** `reason` is a clause ("the Electron binary is not installed (…)"); `binaryMissing` tells the two causes apart. */
  | { ok: false; binaryMissing: boolean; reason: string; detail: string };

const missing = (detail: string): ElectronProbe => ({ ok: false, binaryMissing: true, detail, reason: `the Electron binary is not installed (${detail})` });

export interface ProbeOptions {
  env?: NodeJS.ProcessEnv;
  /** Try the electron package's lazy binary download when the binary is missing (quietly). */
  download?: boolean;
}

const lastLine = (text: string) =>
  text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('at '))
    .pop();

function electronPackageDir(): string | undefined {
  try {
    const load = typeof require === 'function' ? require : createRequire(`${process.cwd()}/`);
    return dirname(load.resolve('electron/package.json'));
  } catch {
    return undefined;
  }
}

/** The binary path the electron package would return, without its side effect of downloading. */
function binaryPath(dir: string, env: NodeJS.ProcessEnv): string | undefined {
  const pathFile = join(dir, 'path.txt');
  const relative = existsSync(pathFile) ? readFileSync(pathFile, 'utf8').trim() : undefined;
  if (env.ELECTRON_OVERRIDE_DIST_PATH) return join(env.ELECTRON_OVERRIDE_DIST_PATH, relative || 'electron');
  const full = relative ? join(dir, 'dist', relative) : undefined;
  return full && existsSync(full) ? full : undefined;
}

/**
 * Can this machine run the Electron shell? It needs the Electron binary and, on Linux, a display.
 * Electron ≥ 41 downloads its binary on first use (`require('electron')`); we run that download
 * ourselves with its output captured, so a machine without internet gets one clear reason, not a trace.
 */
export function probeElectron(options: ProbeOptions = {}): ElectronProbe {
  const env = options.env ?? process.env;
  const dir = electronPackageDir();
  if (!dir) return missing('the electron package is missing from node_modules');
  const noDisplay = process.platform === 'linux' && !env.DISPLAY && !env.WAYLAND_DISPLAY;
  let binary = binaryPath(dir, env);
  if (!binary && options.download !== false && !noDisplay) {
    const install = spawnSync(process.execPath, [join(dir, 'install.js')], { cwd: dir, env, encoding: 'utf8', timeout: 300_000, stdio: ['ignore', 'pipe', 'pipe'] });
    binary = binaryPath(dir, env);
    if (!binary) {
      const why = lastLine(`${install.stdout ?? ''}\n${install.stderr ?? ''}`) ?? install.error?.message ?? `exit code ${install.status}`;
      return missing(`its download failed: ${why}`);
    }
  }
  if (!binary) {
    return missing(`nothing at ${join(dir, 'dist')}${noDisplay ? '; there is no display either' : ''}`);
  }
  if (!existsSync(binary)) return missing(`ELECTRON_OVERRIDE_DIST_PATH points at ${binary}, which does not exist`);
  if (noDisplay) return { ok: false, binaryMissing: false, detail: '$DISPLAY and $WAYLAND_DISPLAY are unset', reason: 'there is no display ($DISPLAY and $WAYLAND_DISPLAY are unset)' };
  return { ok: true, binary };
}
