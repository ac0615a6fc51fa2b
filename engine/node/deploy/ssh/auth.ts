import { readFileSync, existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { utils, type AnyAuthMethod, type AuthHandlerMiddleware, type ParsedKey } from 'ssh2';
import { expandHome } from '../../hosts/configDir.js';
import type { SshEndpoint } from '../../hosts/host.js';
import { agentSocket, describeKey, publicBlobOf, SelectedAgentKeys } from './agentKeys.js';

/** Asks the user for the passphrase of an encrypted key; undefined = no passphrase (skip the key). */
export type PassphrasePrompt = (keyPath: string) => Promise<string | undefined> | string | undefined;

/** The keys OpenSSH tries when no IdentityFile is configured. */
const DEFAULT_KEYS = ['id_ed25519', 'id_ecdsa', 'id_rsa'];

/**
 * The authentication methods for one endpoint, in OpenSSH's order: ssh-agent keys (IdentityAgent, else
 * $SSH_AUTH_SOCK; with IdentitiesOnly only those of the identity files), then each identity file. Key
 * files are read only when their turn comes, so a passphrase is asked for only when the agent did not
 * already succeed. Passphrases live in this closure for one attempt and are never logged. `tried`
 * names every key offered, for the message when the server refuses them all.
 */
export function authHandlerFor(e: SshEndpoint, passphrase?: PassphrasePrompt): { handler: AuthHandlerMiddleware; tried: () => string; missing: () => string[] } {
  const notes: string[] = [];
  /** Configured identity files that do not exist: a refusal after them is about a missing key, not a wrong one. */
  const missing: string[] = [];
  const steps: Array<() => Promise<AnyAuthMethod | undefined>> = [];
  const explicit = e.identityFiles.length > 0;
  const files = explicit ? e.identityFiles.map(expandHome) : DEFAULT_KEYS.map((k) => join(homedir(), '.ssh', k)).filter((f) => existsSync(f));
  const socket = agentSocket(e.identityAgent, e.useAgent);
  if (socket) {
    // IdentitiesOnly: the agent may sign only for the configured keys (found by their public halves).
    const only = e.identitiesOnly ? files.flatMap((f) => publicBlobOf(f) ?? []) : undefined;
    const agent = new SelectedAgentKeys(socket, only, (keys, held) => {
      const which = keys.length > 0 ? keys.map(describeKey).join(', ') : 'none';
      const of = only ? ` of the ${held} it holds (IdentitiesOnly)` : '';
      notes.push(`ssh-agent ${socket}: ${which}${of}`);
    });
    steps.push(async () => ({ type: 'agent', username: e.user, agent }));
  }
  for (const file of files) {
    steps.push(async () => {
      const key = await loadKey(file, passphrase, notes, missing);
      return key ? { type: 'publickey', username: e.user, key } : undefined;
    });
  }
  let next = 0;
  const handler: AuthHandlerMiddleware = (_left, _partial, callback) => {
    void (async () => {
      while (next < steps.length) {
        const method = await steps[next++]();
        if (method) return callback(method);
      }
      // ssh2 takes `false` for "nothing left to try"; its typings do not say so.
      callback(false as unknown as AnyAuthMethod);
    })();
  };
  const tried = () => (notes.length > 0 ? notes.join('; ') : explicit ? 'no usable key' : 'no key: none given, no ~/.ssh/id_* and no ssh-agent');
  return { handler, tried, missing: () => [...missing] };
}

async function loadKey(file: string, passphrase: PassphrasePrompt | undefined, notes: string[], missing: string[]): Promise<ParsedKey | undefined> {
  let data: Buffer;
  try {
    data = readFileSync(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
      missing.push(file);
      notes.push(`${file} (does not exist)`);
      return undefined;
    }
    notes.push(`${file} (cannot read: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
    return undefined;
  }
  let parsed = utils.parseKey(data);
  if (parsed instanceof Error && /encrypted|passphrase/i.test(parsed.message)) {
    const secret = passphrase ? await passphrase(file) : undefined;
    if (secret === undefined) {
      notes.push(`${file} (encrypted; add it to ssh-agent with ssh-add, or enter its passphrase)`);
      return undefined;
    }
    parsed = utils.parseKey(data, secret);
    if (parsed instanceof Error) {
      notes.push(`${file} (wrong passphrase)`);
      return undefined;
    }
  }
  if (parsed instanceof Error) {
    notes.push(`${file} (not a private key Shoal can read: ${parsed.message})`);
    return undefined;
  }
  const key = Array.isArray(parsed) ? parsed[0] : parsed;
  notes.push(file);
  return key;
}
