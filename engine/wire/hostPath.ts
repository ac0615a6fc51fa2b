import { homedir } from 'node:os';
import { join } from 'node:path';

/**
 * A path as a job's config gives it to a process: absolute, or `~/…` for files uploaded under the
 * host's home (a deployed job's model and data), which only the host itself can resolve.
 */
export function hostPath(path: string): string {
  return path.startsWith('~/') ? join(homedir(), path.slice(2)) : path;
}
