import { endpointLabel, type SshEndpoint } from '../../hosts/host.js';
import type { HostKeyVerdict } from './hostKeys.js';
import { knownHostsName } from './fingerprint.js';

/**
 * Errors of connectHost, each saying what happened, where, and what to do — the kind lets the studio
 * pick a dialog and tests assert without matching prose.
 */
export type SshErrorKind =
  | 'unreachable'
  | 'timeout'
  | 'dns'
  | 'auth'
  | 'key-file'
  | 'host-key-untrusted'
  | 'host-key-changed'
  | 'host-key-revoked'
  | 'jump'
  | 'protocol';

export class SshConnectError extends Error {
  constructor(
    readonly kind: SshErrorKind,
    message: string,
    /** `user@address:port` of the hop that failed (the target itself, or a jump host). */
    readonly where: string,
  ) {
    super(message);
    this.name = 'SshConnectError';
  }
}

export function whereOf(e: SshEndpoint): string {
  return `${e.user}@${endpointLabel(e)}`;
}

/** Map an ssh2 / socket error to a SshConnectError for endpoint `e`. */
export function explainSocketError(err: Error & { code?: string; level?: string }, e: SshEndpoint, keysTried: string, missingKeys: string[] = []): SshConnectError {
  const at = endpointLabel(e);
  const where = whereOf(e);
  switch (err.code) {
    case 'ECONNREFUSED':
      return new SshConnectError('unreachable', `Cannot reach ${at}: connection refused. Check that the host is up and that sshd listens on port ${e.port}.`, where);
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
    case 'ECONNRESET':
      return new SshConnectError('unreachable', `Cannot reach ${at}: ${err.code}. Check that the host is up and on a network this machine can reach, and the port (${e.port}).`, where);
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return new SshConnectError('dns', `Cannot resolve the host name "${e.address}" (${err.code}). Check the address, or your DNS / ssh config.`, where);
  }
  // OpenSSH's server disconnects with this once MaxAuthTries keys were refused: an authentication
  // failure (usually an agent holding many keys), not a network one.
  if (/too many authentication failures/i.test(err.message))
    return new SshConnectError(
      'auth',
      `${where} refused every key offered for user "${e.user}" and closed the connection after too many attempts ("${err.message}": the server's MaxAuthTries). Offered: ${keysTried}. ` +
        `An ssh-agent offers all the keys it holds unless the host has "IdentitiesOnly yes": check IdentityFile/IdentitiesOnly for this host in ~/.ssh/config (or the cluster's identity file), or remove keys from the agent (ssh-add -d).`,
      where,
    );
  // The key the host was set up with is gone: that is the cause, not the server's refusal of the rest.
  if (err.level === 'client-authentication' && missingKeys.length > 0)
    return new SshConnectError(
      'key-file',
      `The identity file ${missingKeys.join(', ')} configured for ${where} does not exist, and ${where} refused whatever else was offered (${keysTried}). Restore the key file, or point the host at a key that exists: IdentityFile in ~/.ssh/config, or shoal cluster edit <cluster> --host <alias> --identity <key file>.`,
      where,
    );
  if (err.level === 'client-authentication')
    return new SshConnectError(
      'auth',
      `${where} refused the keys offered for user "${e.user}" (offered: ${keysTried}). Check IdentityFile/IdentitiesOnly for this host in ~/.ssh/config (or the cluster's identity file), that the public key is in ~${e.user}/.ssh/authorized_keys on the host, that the user name is right, or that ssh-agent holds the key (ssh-add -l).`,
      where,
    );
  return new SshConnectError('protocol', `SSH to ${at} failed: ${err.message}.`, where);
}

export function timeoutError(e: SshEndpoint, ms: number): SshConnectError {
  return new SshConnectError(
    'timeout',
    `No SSH answer from ${endpointLabel(e)} within ${ms < 1000 ? `${ms} ms` : `${Math.round(ms / 1000)} s`}. Check that the host is up, that the address and port (${e.port}) are right, and that no firewall drops the connection.`,
    whereOf(e),
  );
}

/** The refusal for a host key that is not accepted; `verdict` says why. */
export function hostKeyError(e: SshEndpoint, verdict: Exclude<HostKeyVerdict, { kind: 'known' }>): SshConnectError {
  const at = endpointLabel(e);
  const name = knownHostsName(e.address, e.port);
  if (verdict.kind === 'unknown')
    return new SshConnectError(
      'host-key-untrusted',
      `The host key of ${at} (${verdict.keyType} ${verdict.fingerprint}) is not known and was not trusted. Confirm the fingerprint with the host's administrator (on the host: ssh-keygen -l -f /etc/ssh/ssh_host_ed25519_key.pub), then trust it (CLI: --trust-new).`,
      whereOf(e),
    );
  if (verdict.kind === 'revoked')
    return new SshConnectError('host-key-revoked', `${at} presented the host key ${verdict.fingerprint}, which is marked @revoked in ${verdict.file} line ${verdict.line}. Shoal refused to connect.`, whereOf(e));
  const recorded = verdict.recorded.map((r) => `  recorded:  ${r.keyType} ${r.fingerprint} (${r.file} line ${r.line})`);
  const files = [...new Set(verdict.recorded.map((r) => r.file))];
  return new SshConnectError(
    'host-key-changed',
    [
      `WARNING: the host key of ${at} has CHANGED. Shoal refused to connect.`,
      ...recorded,
      `  presented: ${verdict.keyType} ${verdict.fingerprint}`,
      `Someone could be intercepting the connection, or the host was reinstalled or its key rotated.`,
      `Confirm the new fingerprint with the host's administrator; if it is right, remove the old entry with ` +
        files.map((f) => `ssh-keygen -R '${name}' -f ${f}`).join(' and ') +
        `, then connect again to trust the new key.`,
    ].join('\n'),
    whereOf(e),
  );
}
