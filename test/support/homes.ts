import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Temporary homes for tests, so no test reads or writes the real user's files: the studio's own home
 * in this process (useTempHome) or for a studio process (studioHome), and one home per simulated SSH
 * host (hostHome: its ~/.shoal, uploads, jobs and logs).
 */

/**
 * Point HOME (~/.ssh/config, ~/.ssh/known_hosts, default keys) and Shoal's config directory at a fresh
 * temporary directory and hide any ssh-agent, so tests neither read nor write the real user's files.
 * Returns the home and a function that restores the environment.
 */
export function useTempHome(): { home: string; configDir: string; restore(): void } {
  const saved = { HOME: process.env.HOME, SHOAL_CONFIG_DIR: process.env.SHOAL_CONFIG_DIR, SSH_AUTH_SOCK: process.env.SSH_AUTH_SOCK };
  const home = mkdtempSync(join(tmpdir(), 'shoal-home-'));
  const configDir = join(home, 'shoal-config');
  mkdirSync(join(home, '.ssh'), { recursive: true, mode: 0o700 });
  process.env.HOME = home;
  process.env.SHOAL_CONFIG_DIR = configDir;
  delete process.env.SSH_AUTH_SOCK;
  return {
    home,
    configDir,
    restore() {
      for (const [k, v] of Object.entries(saved)) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
      rmSync(home, { recursive: true, force: true });
    },
  };
}

/**
 * A temporary home for a studio process (end-to-end tests) and the environment that points it there:
 * HOME, Shoal's config and data directories, no ssh-agent. Remove `home` when done.
 */
export function studioHome(name: string): { home: string; env: Record<string, string> } {
  const home = mkdtempSync(join(tmpdir(), `shoal-e2e-${name}-`));
  return { home, env: { HOME: home, SHOAL_CONFIG_DIR: join(home, 'shoal-config'), SSH_AUTH_SOCK: '', SHOAL_DATA_DIR: join(home, 'data') } };
}

/** The $HOME of a simulated SSH host (startSshd's `home`). Remove it with `removeHomes` after its server stops. */
export function hostHome(name: string): string {
  return mkdtempSync(join(tmpdir(), `shoal-host-${name}-`));
}

export function removeHomes(homes: readonly string[] | undefined): void {
  for (const h of homes ?? []) rmSync(h, { recursive: true, force: true });
}
