import { homedir } from 'node:os';
import { join } from 'node:path';

/**
 * Where Shoal keeps the user's clusters and its own known_hosts: $SHOAL_CONFIG_DIR (tests, portable
 * installs), else $XDG_CONFIG_HOME/shoal, else ~/.config/shoal. Read at every call so tests can point it
 * at a temporary directory.
 */
export function shoalConfigDir(): string {
  if (process.env.SHOAL_CONFIG_DIR) return process.env.SHOAL_CONFIG_DIR;
  const xdg = process.env.XDG_CONFIG_HOME;
  return join(xdg && xdg.startsWith('/') ? xdg : join(homedir(), '.config'), 'shoal');
}

/** `~` and `~/x` to the home directory; other paths unchanged. */
export function expandHome(path: string): string {
  if (path === '~') return homedir();
  if (path.startsWith('~/')) return join(homedir(), path.slice(2));
  return path;
}
