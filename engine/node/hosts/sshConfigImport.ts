import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { expandHome } from './configDir.js';
import type { SshHost } from './host.js';
import { parseSshConfigFile } from './sshConfigParse.js';
import { concreteHostNames, hostFromSshConfig } from './sshConfigResolve.js';
import { matchPatternList } from './sshPatterns.js';

export interface SshConfigImport {
  file: string;
  hosts: SshHost[];
  /** What Shoal cannot honour (ProxyCommand …), per host. */
  warnings: string[];
}

/**
 * Hosts from an OpenSSH client config (default ~/.ssh/config): every concrete `Host` name, or the ones
 * named in `only`, each resolved as `ssh` would resolve it (HostName, User, Port, IdentityFile, ProxyJump).
 */
export function importSshConfig(options: { file?: string; only?: string[] } = {}): SshConfigImport {
  const file = options.file ? resolve(expandHome(options.file)) : join(homedir(), '.ssh', 'config');
  if (!existsSync(file)) throw new Error(`No ssh config at ${file}. Give one with --ssh-config <file>, or add hosts with: shoal cluster add <name> --host user@address[:port].`);
  const directives = parseSshConfigFile(file);
  const names = concreteHostNames(directives);
  let chosen = names;
  if (options.only && options.only.length > 0) {
    const hostPatterns = directives.filter((d) => d.keyword === 'host' && !d.args.every((p) => p === '*'));
    for (const name of options.only) {
      // A name may also be covered by a pattern block (`Host *.lab`): ssh would resolve it, so do we.
      if (!names.includes(name) && !hostPatterns.some((d) => matchPatternList(name, d.args)))
        throw new Error(`No Host entry in ${file} matches "${name}". Hosts there: ${names.join(', ') || '(none)'}.`);
    }
    chosen = options.only;
  }
  if (chosen.length === 0) throw new Error(`${file} names no concrete hosts (only patterns like *). Name them with --hosts a,b.`);
  const hosts: SshHost[] = [];
  const warnings: string[] = [];
  for (const name of chosen) {
    const { host, warnings: w } = hostFromSshConfig(directives, name);
    hosts.push(host);
    warnings.push(...w);
  }
  return { file, hosts, warnings };
}
