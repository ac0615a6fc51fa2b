import { existsSync, readdirSync, statSync } from 'node:fs';
import { isAbsolute, join, sep } from 'node:path';

/** OpenSSH's pattern language (`*` any run, `?` one character), anchored at both ends. */
export function wildcardToRegExp(pattern: string, caseInsensitive: boolean): RegExp {
  const body = pattern.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.');
  return new RegExp(`^${body}$`, caseInsensitive ? 'i' : '');
}

export function hasWildcard(pattern: string): boolean {
  return pattern.includes('*') || pattern.includes('?');
}

/**
 * Does `name` match a pattern list as in `Host a b !c` or a known_hosts host field: some positive pattern
 * matches and no negated one does. Host names compare case-insensitively, as OpenSSH does.
 */
export function matchPatternList(name: string, patterns: string[]): boolean {
  let matched = false;
  for (const p of patterns) {
    const negated = p.startsWith('!');
    if (wildcardToRegExp(negated ? p.slice(1) : p, true).test(name)) {
      if (negated) return false;
      matched = true;
    }
  }
  return matched;
}

/**
 * Expand a glob in an absolute path (`~/.ssh/config.d/*.conf`), segment by segment, sorted as glob(3)
 * sorts. A path without wildcards is returned as is when it exists. Node 20 has no fs.glob; Include only
 * needs `*` and `?`.
 */
export function expandPathGlob(path: string): string[] {
  if (!isAbsolute(path)) throw new Error(`expandPathGlob needs an absolute path, got ${path}`);
  let found: string[] = [sep];
  for (const segment of path.split(sep).filter(Boolean)) {
    const next: string[] = [];
    for (const dir of found) {
      if (!hasWildcard(segment)) {
        next.push(join(dir, segment));
        continue;
      }
      let names: string[];
      try {
        if (!statSync(dir).isDirectory()) continue;
        names = readdirSync(dir);
      } catch {
        continue;
      }
      const re = wildcardToRegExp(segment, false);
      for (const name of names.sort()) {
        // Like glob(3): a wildcard does not match a leading dot.
        if (name.startsWith('.') && !segment.startsWith('.')) continue;
        if (re.test(name)) next.push(join(dir, name));
      }
    }
    found = next;
  }
  return found.filter((p) => existsSync(p));
}
