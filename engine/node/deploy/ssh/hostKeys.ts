import { homedir } from 'node:os';
import { join } from 'node:path';
import { existsSync, readFileSync } from 'node:fs';
import { writeFileAtomic } from '../../hosts/atomicWrite.js';
import { shoalConfigDir } from '../../hosts/configDir.js';
import { fingerprintOf, keyTypeOf, knownHostsName } from './fingerprint.js';
import { knownHostsLine, readKnownHostsFile, type KnownHostEntry } from './knownHosts.js';

/** What the stores say about the key a host presented. */
export type HostKeyVerdict =
  | { kind: 'known'; fingerprint: string; file: string }
  | { kind: 'unknown'; fingerprint: string; keyType: string }
  | { kind: 'changed'; fingerprint: string; keyType: string; recorded: RecordedKey[] }
  | { kind: 'revoked'; fingerprint: string; file: string; line: number };

export interface RecordedKey {
  keyType: string;
  fingerprint: string;
  file: string;
  line: number;
}

/** ssh2 algorithm names for each key type, so a host is asked first for a key type we already know. */
const ALGORITHMS_OF_KEY_TYPE: Record<string, string[]> = {
  'ssh-rsa': ['rsa-sha2-512', 'rsa-sha2-256', 'ssh-rsa'],
};

/**
 * Host keys from the user's known_hosts (read only: Shoal never edits the user's OpenSSH files) and from
 * Shoal's own store, `<config dir>/known_hosts`, where keys the user trusted through Shoal are written.
 */
export class HostKeyStore {
  readonly userFiles: string[];
  readonly shoalFile: string;

  constructor(options: { userKnownHosts?: string[]; shoalKnownHosts?: string } = {}) {
    this.userFiles = options.userKnownHosts ?? [join(homedir(), '.ssh', 'known_hosts')];
    this.shoalFile = options.shoalKnownHosts ?? join(shoalConfigDir(), 'known_hosts');
  }

  private entriesFor(address: string, port: number): KnownHostEntry[] {
    const name = knownHostsName(address, port);
    return [...this.userFiles, this.shoalFile].flatMap((f) => readKnownHostsFile(f)).filter((e) => e.matches(name));
  }

  /**
   * Revoked beats everything; then a recorded identical key makes it known. A host with records but none
   * equal to the presented key has CHANGED — also when only keys of other types are recorded: connect
   * asks the host for the recorded types first, so a host that cannot show one is not the host we knew.
   */
  check(address: string, port: number, rawKey: Buffer): HostKeyVerdict {
    const fingerprint = fingerprintOf(rawKey);
    const keyType = keyTypeOf(rawKey);
    const entries = this.entriesFor(address, port);
    const revoked = entries.find((e) => e.marker === 'revoked' && e.key.equals(rawKey));
    if (revoked) return { kind: 'revoked', fingerprint, file: revoked.file, line: revoked.line };
    const live = entries.filter((e) => e.marker === null);
    const same = live.find((e) => e.key.equals(rawKey));
    if (same) return { kind: 'known', fingerprint, file: same.file };
    if (live.length === 0) return { kind: 'unknown', fingerprint, keyType };
    return {
      kind: 'changed',
      fingerprint,
      keyType,
      recorded: live.map((e) => ({ keyType: e.keyType, fingerprint: fingerprintOf(e.key), file: e.file, line: e.line })),
    };
  }

  /** ssh2 host key algorithms to ask for first: those of the key types recorded for this host. */
  preferredAlgorithms(address: string, port: number): string[] {
    const types = new Set(this.entriesFor(address, port).filter((e) => e.marker === null).map((e) => e.keyType));
    return [...types].flatMap((t) => ALGORITHMS_OF_KEY_TYPE[t] ?? [t]);
  }

  /** Record a key the user trusted, in Shoal's store (atomically, mode 600). */
  trust(address: string, port: number, rawKey: Buffer): void {
    // Hosts behind one jump host each meet its key; record it once.
    if (this.check(address, port, rawKey).kind === 'known') return;
    const old = existsSync(this.shoalFile) ? readFileSync(this.shoalFile, 'utf8') : '';
    const line = knownHostsLine(knownHostsName(address, port), keyTypeOf(rawKey), rawKey);
    writeFileAtomic(this.shoalFile, (old && !old.endsWith('\n') ? old + '\n' : old) + line + '\n');
  }
}
