import type { TrustRequest } from '../deploy/ssh/connectHost.js';
import type { CommandIo } from './commandIo.js';
import { askLine, askYesNo } from './ttyPrompt.js';

/**
 * The questions a command asks while connecting to many hosts: whether to trust an unknown host key
 * (each key once, even when several hosts sit behind the same jump host) and a key's passphrase (each
 * key file once). Without a terminal, unknown keys are refused unless --trust-new was given.
 */
export function connectPrompts(io: CommandIo, trustNew: boolean): { trustRequest: (r: TrustRequest) => Promise<boolean>; passphrase?: (keyPath: string) => Promise<string> } {
  const decisions = new Map<string, Promise<boolean>>();
  const decide = async (r: TrustRequest): Promise<boolean> => {
    if (trustNew) {
      io.err(`Trusting the new host key of ${r.where}: ${r.keyType} ${r.fingerprint} (--trust-new).\n`);
      return true;
    }
    if (!io.interactive) return false;
    return askYesNo(`The host key of ${r.where} is not known yet.\n  ${r.keyType} ${r.fingerprint}\nCompare it with the host's (ssh-keygen -l -f /etc/ssh/ssh_host_*_key.pub on the host). Trust it?`);
  };
  const trustRequest = (r: TrustRequest): Promise<boolean> => {
    const id = `${r.address}:${r.port} ${r.fingerprint}`;
    if (!decisions.has(id)) decisions.set(id, decide(r));
    return decisions.get(id)!;
  };
  if (!io.interactive) return { trustRequest };
  const passphrases = new Map<string, Promise<string>>();
  const passphrase = (keyPath: string) => {
    if (!passphrases.has(keyPath)) passphrases.set(keyPath, askLine(`Passphrase for ${keyPath}: `, true));
    return passphrases.get(keyPath)!;
  };
  return { trustRequest, passphrase };
}
