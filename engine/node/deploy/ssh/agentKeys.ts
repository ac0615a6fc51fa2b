import { existsSync, readFileSync } from 'node:fs';
import { OpenSSHAgent, utils, type IdentityCallback, type ParsedKey } from 'ssh2';
import { expandHome } from '../../hosts/configDir.js';
import { fingerprintOf } from './fingerprint.js';

/**
 * The ssh-agent side of authentication, as OpenSSH does it: which agent (IdentityAgent, else
 * $SSH_AUTH_SOCK), and which of its keys are offered (with IdentitiesOnly, only those of the
 * configured identity files; otherwise all, which a server's MaxAuthTries may cut short).
 */

/** The agent socket for an endpoint, or undefined for none (`IdentityAgent none`, or no agent running). */
export function agentSocket(identityAgent: string | undefined, useAgent: boolean | undefined): string | undefined {
  if (useAgent === false) return undefined;
  if (identityAgent === undefined || identityAgent === 'SSH_AUTH_SOCK') return process.env.SSH_AUTH_SOCK || undefined;
  if (identityAgent.toLowerCase() === 'none') return undefined;
  // `$NAME` names an environment variable holding the path, as in OpenSSH.
  if (identityAgent.startsWith('$')) return process.env[identityAgent.slice(1)] || undefined;
  return expandHome(identityAgent);
}

/** The public key blob of an identity file: from `<file>.pub`, else from the private key if it is not encrypted. */
export function publicBlobOf(file: string): Buffer | undefined {
  for (const path of [`${file}.pub`, file]) {
    if (!existsSync(path)) continue;
    try {
      const parsed = utils.parseKey(readFileSync(path));
      if (parsed instanceof Error) continue;
      return (Array.isArray(parsed) ? parsed[0] : parsed).getPublicSSH();
    } catch {
      continue;
    }
  }
  return undefined;
}

/** How a key is named in messages: its type, fingerprint and comment, as `ssh-add -l` shows it. */
export function describeKey(key: ParsedKey): string {
  return `${key.type} ${fingerprintOf(key.getPublicSSH())}${key.comment ? ` (${key.comment})` : ''}`;
}

/**
 * An OpenSSH agent that offers only the keys whose public blobs are in `only` (all keys when `only` is
 * undefined), and tells `offered` which keys those were.
 */
export class SelectedAgentKeys extends OpenSSHAgent {
  constructor(
    socketPath: string,
    private readonly only: Buffer[] | undefined,
    private readonly offered: (keys: ParsedKey[], held: number) => void,
  ) {
    super(socketPath);
  }

  override getIdentities(cb: IdentityCallback<ParsedKey>): void {
    super.getIdentities((err, keys) => {
      if (err || !keys) return cb(err ?? new Error('the agent returned no keys'));
      // OpenSSHAgent answers parsed keys (with their comments); anything else is not offered.
      const parsed = keys.filter((k): k is ParsedKey => typeof (k as Partial<ParsedKey>).getPublicSSH === 'function');
      const chosen = this.only ? parsed.filter((k) => this.only!.some((blob) => blob.equals(k.getPublicSSH()))) : parsed;
      this.offered(chosen, keys.length);
      cb(null, chosen);
    });
  }
}
