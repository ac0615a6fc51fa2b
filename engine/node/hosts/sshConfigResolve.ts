import { homedir, hostname, userInfo } from 'node:os';
import { expandHome } from './configDir.js';
import type { JumpHop, SshHost } from './host.js';
import { parseHostSpec } from './host.js';
import type { ConfigDirective } from './sshConfigParse.js';
import { hasWildcard, matchPatternList } from './sshPatterns.js';

/** What the config says about one host name, OpenSSH-style: for each keyword the first value wins. */
export interface ResolvedSshConfig {
  hostName: string;
  user: string;
  port: number;
  identityFiles: string[];
  useAgent: boolean;
  proxyJump?: string;
  /** Set when the host needs a ProxyCommand, which Shoal does not run; the import reports it. */
  proxyCommand?: string;
}

/** Names the user can connect to: Host patterns without wildcards or negation. */
export function concreteHostNames(directives: ConfigDirective[]): string[] {
  const names: string[] = [];
  for (const d of directives)
    if (d.keyword === 'host') for (const p of d.args) if (!p.startsWith('!') && !hasWildcard(p) && !names.includes(p)) names.push(p);
  return names;
}

function applies(d: ConfigDirective, name: string): boolean {
  if (d.block.kind === 'all') return true;
  if (d.block.kind === 'match') return false;
  return matchPatternList(name, d.block.patterns);
}

/** Resolve `name` through the directives, the way `ssh -G name` does for the keywords Shoal uses. */
export function resolveSshConfig(directives: ConfigDirective[], name: string): ResolvedSshConfig {
  const first = new Map<string, string[]>();
  const identityFiles: string[] = [];
  for (const d of directives) {
    if (d.keyword === 'host' || !applies(d, name) || d.args.length === 0) continue;
    if (d.keyword === 'identityfile') identityFiles.push(d.args[0]);
    else if (!first.has(d.keyword)) first.set(d.keyword, d.args);
  }
  const hostName = (first.get('hostname')?.[0] ?? name).replace(/%(.)/g, (_, c: string) => (c === 'h' ? name : c === '%' ? '%' : `%${c}`));
  const user = first.get('user')?.[0] ?? userInfo().username;
  const portText = first.get('port')?.[0] ?? '22';
  const port = Number(portText);
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new Error(`ssh config for ${name}: Port ${portText} is not a port number.`);
  const tokens: Record<string, string> = { d: homedir(), u: userInfo().username, h: hostName, r: user, l: hostname(), n: name, p: String(port), '%': '%' };
  const expandTokens = (s: string) => s.replace(/%(.)/g, (m, c: string) => tokens[c] ?? m);
  const proxyJump = first.get('proxyjump')?.[0];
  const proxyCommand = first.get('proxycommand')?.join(' ');
  return {
    hostName,
    user,
    port,
    identityFiles: identityFiles.filter((f) => f.toLowerCase() !== 'none').map((f) => expandHome(expandTokens(f))),
    useAgent: (first.get('identityagent')?.[0] ?? '').toLowerCase() !== 'none',
    ...(proxyJump && proxyJump.toLowerCase() !== 'none' ? { proxyJump } : {}),
    ...(proxyCommand && proxyCommand.toLowerCase() !== 'none' ? { proxyCommand } : {}),
  };
}

/**
 * The ProxyJump chain of a host as hops, first hop first. Each hop named in ProxyJump is itself resolved
 * through the config (its HostName, User, Port, IdentityFile and its own ProxyJump), as OpenSSH does.
 */
export function resolveJumpChain(directives: ConfigDirective[], proxyJump: string | undefined, seen: string[] = []): JumpHop[] {
  if (!proxyJump) return [];
  const hops: JumpHop[] = [];
  for (const spec of proxyJump.split(',').map((s) => s.trim()).filter(Boolean)) {
    const given = parseHostSpec(spec, 'unused');
    if (seen.includes(given.address)) throw new Error(`ProxyJump loop: ${[...seen, given.address].join(' → ')}.`);
    const conf = resolveSshConfig(directives, given.address);
    hops.push(...resolveJumpChain(directives, conf.proxyJump, [...seen, given.address]));
    hops.push({
      address: conf.hostName,
      // What the ProxyJump spec says explicitly beats the hop's own config.
      port: /:\d+$/.test(spec) ? given.port : conf.port,
      user: spec.includes('@') ? given.user : conf.user,
      identityFiles: conf.identityFiles,
    });
  }
  return hops;
}

/** An SshHost for the config name `alias`, with warnings for what Shoal cannot honour. */
export function hostFromSshConfig(directives: ConfigDirective[], alias: string): { host: SshHost; warnings: string[] } {
  const conf = resolveSshConfig(directives, alias);
  const warnings: string[] = [];
  if (conf.proxyCommand && !conf.proxyJump)
    warnings.push(`${alias}: ProxyCommand is not supported (only ProxyJump); Shoal will connect to ${conf.hostName}:${conf.port} directly.`);
  return {
    host: {
      alias,
      address: conf.hostName,
      port: conf.port,
      user: conf.user,
      identityFiles: conf.identityFiles,
      useAgent: conf.useAgent,
      jump: resolveJumpChain(directives, conf.proxyJump, [alias]),
    },
    warnings,
  };
}
