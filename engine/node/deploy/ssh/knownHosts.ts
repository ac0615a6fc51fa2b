import { createHmac, timingSafeEqual } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { matchPatternList } from '../../hosts/sshPatterns.js';

/**
 * One known_hosts file, parsed the way OpenSSH reads it: plain and hashed (`|1|salt|hash`) host fields,
 * `[host]:port` names, negated and wildcard patterns, and the `@revoked` marker. `@cert-authority` lines
 * are kept out: Shoal does not verify host certificates, so they neither vouch for nor refuse a key.
 */
export interface KnownHostEntry {
  marker: 'revoked' | null;
  keyType: string;
  key: Buffer;
  file: string;
  line: number;
  /** Matches a host as named in known_hosts (`host` or `[host]:port`). */
  matches(name: string): boolean;
}

export function parseKnownHosts(text: string, file: string): KnownHostEntry[] {
  const entries: KnownHostEntry[] = [];
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = raw.trim();
    if (!line || line.startsWith('#')) return;
    const fields = line.split(/\s+/);
    let marker: KnownHostEntry['marker'] = null;
    if (fields[0].startsWith('@')) {
      const m = fields.shift()!;
      if (m !== '@revoked') return;
      marker = 'revoked';
    }
    const [hosts, keyType, keyB64] = fields;
    if (!hosts || !keyType || !keyB64) return;
    const key = Buffer.from(keyB64, 'base64');
    if (key.length === 0) return;
    entries.push({ marker, keyType, key, file, line: i + 1, matches: hostMatcher(hosts) });
  });
  return entries;
}

function hostMatcher(hostsField: string): (name: string) => boolean {
  if (hostsField.startsWith('|1|')) {
    const [, , saltB64, hashB64] = hostsField.split('|');
    const salt = Buffer.from(saltB64 ?? '', 'base64');
    const hash = Buffer.from(hashB64 ?? '', 'base64');
    return (name) => {
      const h = createHmac('sha1', salt).update(name).digest();
      return h.length === hash.length && timingSafeEqual(h, hash);
    };
  }
  const patterns = hostsField.split(',');
  return (name) => matchPatternList(name, patterns);
}

export function readKnownHostsFile(path: string): KnownHostEntry[] {
  if (!existsSync(path)) return [];
  return parseKnownHosts(readFileSync(path, 'utf8'), path);
}

/** A known_hosts line Shoal writes: plain (not hashed) so the user can read and audit Shoal's store. */
export function knownHostsLine(name: string, keyType: string, key: Buffer): string {
  return `${name} ${keyType} ${key.toString('base64')}`;
}
