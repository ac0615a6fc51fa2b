import { existsSync } from 'node:fs';
import { userInfo } from 'node:os';
import { resolve } from 'node:path';
import { expandHome } from './configDir.js';
import { endpointLabel, parseHostSpec, type JumpHop, type SshHost } from './host.js';

/**
 * Hosts from `[user@]address[:port]` specs with an optional identity file and jump chain — what
 * `shoal cluster add` takes, for the studio's Add hosts form. Key paths are checked and kept as paths.
 */
export function hostsFromSpecs(specs: string[], options: { identityFile?: string; jump?: string; existing?: SshHost[] } = {}): SshHost[] {
  const me = userInfo().username;
  const identityFiles = options.identityFile ? [identityPath(options.identityFile)] : [];
  const jump: JumpHop[] = (options.jump ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((spec) => ({ ...parseHostSpec(spec, me), identityFiles }));
  const hosts: SshHost[] = [];
  for (const spec of specs) {
    const { user, address, port } = parseHostSpec(spec.trim(), me);
    const taken = [...(options.existing ?? []), ...hosts].some((h) => h.alias === address && (h.address !== address || h.port !== port));
    hosts.push({ alias: taken ? `${address}-${port}` : address, address, port, user, identityFiles, useAgent: true, jump });
  }
  return hosts;
}

function identityPath(file: string): string {
  const path = resolve(expandHome(file));
  if (!existsSync(path)) throw new Error(`Identity file ${path} does not exist.`);
  if (path.endsWith('.pub')) throw new Error(`${path} is a public key: give the private key file (without .pub).`);
  return path;
}

export const hopLabel = (h: { user: string; address: string; port: number }) => `${h.user}@${endpointLabel(h)}`;
