import { existsSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';

/**
 * The one way an operating-system error on a user's file reaches the user: which file it was by its
 * role (`--data`, `model file`, `the source of dataset.json …`), the path, what happened in words and
 * what to do — never a bare `EACCES: permission denied, open …`, which names neither the option nor
 * the fix (and `EISDIR … read` not even the path).
 */
const WHAT: Record<string, { what: string; todo: string }> = {
  ENOENT: { what: 'does not exist', todo: 'Check the path (and that the file was not moved).' },
  EISDIR: { what: 'is a folder, where a file was expected', todo: 'Give the file itself, not its folder.' },
  ENOTDIR: { what: 'lies below a file, not a folder (a part of the path is a file)', todo: 'Check the path: every part before the last must be a folder.' },
  EACCES: { what: 'may not be opened by this user (permission denied)', todo: 'Check its permissions (ls -l), or use a copy you own.' },
  EPERM: { what: 'may not be changed by this user (operation not permitted)', todo: 'Check its permissions, or choose another path.' },
  EEXIST: { what: 'already exists', todo: 'Choose another path, or remove what is there.' },
  EROFS: { what: 'is on a read-only file system', todo: 'Choose a path on a writable disk.' },
  ENOSPC: { what: 'cannot be written: the disk is full', todo: 'Free some space, or choose another disk.' },
  ELOOP: { what: 'is a link that leads round in a circle', todo: 'Fix or remove the link.' },
  ENAMETOOLONG: { what: 'has a name too long for the file system', todo: 'Choose a shorter path.' },
  EMFILE: { what: 'could not be opened: too many files are open', todo: 'Close other programs, or raise the limit (ulimit -n), and try again.' },
};

/** The error's OS code (ENOENT, …) when it is an operating-system error, else undefined. */
export function osErrorCode(err: unknown): string | undefined {
  const code = (err as NodeJS.ErrnoException | null)?.code;
  return typeof code === 'string' && /^E[A-Z]+$/.test(code) ? code : undefined;
}

/**
 * `err` said for a person when it is an OS error about `path` in `role`; any other error is returned
 * as it is. Node's own path (the file actually opened, perhaps inside `path`) is named when it differs.
 */
export function explainFileError(err: unknown, role: string, path: string): Error {
  const code = osErrorCode(err);
  if (code === undefined) return err instanceof Error ? err : new Error(String(err));
  const found = (err as NodeJS.ErrnoException).path;
  const subject = found && found !== path ? `${found} (in ${path})` : path;
  const known = WHAT[code];
  const what = known ? known.what : `could not be used (${(err as Error).message})`;
  return new Error(`${role} ${subject} ${what}. ${known?.todo ?? 'Check the path and try again.'}`);
}

/**
 * Make `dir` and the folders above it that are missing, one at a time: a recursive mkdir spins for
 * ever where the file system answers ENOENT for a parent that exists (/proc), and a failure is said
 * as `role` and the path, as explainFileError does.
 */
export function makeFolders(dir: string, role: string, mode?: number): void {
  const missing: string[] = [];
  for (let at = dir; !existsSync(at) && dirname(at) !== at; at = dirname(at)) missing.unshift(at);
  for (const folder of missing) {
    try {
      mkdirSync(folder, mode === undefined ? {} : { mode });
    } catch (err) {
      const code = osErrorCode(err);
      if (code === 'EEXIST' && existsSync(folder)) continue;
      // Its parent exists (it was looked at above): the file system will not hold folders there.
      if (code === 'ENOENT') throw new Error(`${role} ${dir}: ${folder} cannot be created there (the file system answers "no such file or directory"). Choose a folder on an ordinary disk.`);
      throw explainFileError(err, role, dir);
    }
  }
}
