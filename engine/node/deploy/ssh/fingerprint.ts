import { createHash } from 'node:crypto';

/** The SHA256 fingerprint exactly as `ssh-keygen -l` prints it: unpadded base64 of sha256(key blob). */
export function fingerprintOf(rawKey: Buffer): string {
  return 'SHA256:' + createHash('sha256').update(rawKey).digest('base64').replace(/=+$/, '');
}

/** The key type named inside an SSH public key blob (`ssh-ed25519`, `ssh-rsa`, `ecdsa-sha2-nistp256` …). */
export function keyTypeOf(rawKey: Buffer): string {
  if (rawKey.length < 4) return 'unknown';
  const len = rawKey.readUInt32BE(0);
  return len > 0 && 4 + len <= rawKey.length ? rawKey.subarray(4, 4 + len).toString('latin1') : 'unknown';
}

/** The name a host's keys are filed under in known_hosts: `host` on port 22, `[host]:port` otherwise. */
export function knownHostsName(address: string, port: number): string {
  return port === 22 ? address : `[${address}]:${port}`;
}
