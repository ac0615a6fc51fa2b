import { homedir, hostname, userInfo } from 'node:os';
import { expandHome } from './configDir.js';
import type { JumpHop, SshHost } from './host.js';
import { parseHostSpec } from './host.js';
import type { ConfigBlock, ConfigDirective } from './sshConfigParse.js';
import { decideMatch, usesFinalPass } from './sshConfigMatch.js';
import { hasWildcard, matchPatternList } from './sshPatterns.js';

/** What the config says about one host name, OpenSSH-style: for each keyword the first value wins. */
export interface ResolvedSshConfig {
  hostName: string;
  user: string;
  port: number;
  identityFiles: string[];
  useAgent: boolean;
  /** `IdentitiesOnly yes`. */
  identitiesOnly: boolean;
  /** `IdentityAgent` when it names a socket (or `$VAR` / `SSH_AUTH_SOCK`); `none` is useAgent false. */
  identityAgent?: string;
  proxyJump?: string;
  /** Match blocks that could not be decided (exec, localnetwork …) and were not applied. */
  undecided: string[];
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

/**
 * Resolve `name` through the directives, the way `ssh -G name` does for the keywords Shoal uses: for
 * each keyword the first value that applies wins; Host blocks match the name as typed, Match blocks are
 * decided when reached with the HostName and User set so far (sshConfigMatch.ts); when some Match uses
 * `canonical` or `final`, a second pass (where those are true) fills what the first left unset.
 */
export function resolveSshConfig(directives: ConfigDirective[], name: string): ResolvedSshConfig {
  const first = new Map<string, string[]>();
  const identityFiles: string[] = [];
  const undecided = new Set<string>();
  const localUser = userInfo().username;
  const currentHost = () => (first.get('hostname')?.[0] ?? name).replace(/%(.)/g, (_, c: string) => (c === 'h' ? name : c === '%' ? '%' : `%${c}`));
  const pass = (finalPass: boolean) => {
    const decided = new Map<ConfigBlock, boolean>();
    const applies = (block: ConfigBlock): boolean => {
      if (block.kind === 'all') return true;
      if (block.kind === 'host') return matchPatternList(name, block.patterns);
      let verdict = decided.get(block);
      if (verdict === undefined) {
        const match = decideMatch(block.criteria, { originalHost: name, host: currentHost(), user: first.get('user')?.[0] ?? localUser, finalPass });
        for (const c of match.undecided) undecided.add(`Match ${c} (${block.file}:${block.line})`);
        verdict = match.applies;
        decided.set(block, verdict);
      }
      return verdict;
    };
    for (const d of directives) {
      if (d.keyword === 'host' || d.args.length === 0 || !applies(d.block)) continue;
      if (d.keyword === 'identityfile') {
        if (!identityFiles.includes(d.args[0])) identityFiles.push(d.args[0]);
      } else if (!first.has(d.keyword)) first.set(d.keyword, d.args);
    }
  };
  pass(false);
  if (directives.some((d) => d.block.kind === 'match' && usesFinalPass(d.block.criteria))) pass(true);
  const hostName = currentHost();
  const user = first.get('user')?.[0] ?? localUser;
  const portText = first.get('port')?.[0] ?? '22';
  const port = Number(portText);
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new Error(`ssh config for ${name}: Port ${portText} is not a port number.`);
  const tokens: Record<string, string> = { d: homedir(), u: userInfo().username, h: hostName, r: user, l: hostname(), n: name, p: String(port), '%': '%' };
  const expandTokens = (s: string) => s.replace(/%(.)/g, (m, c: string) => tokens[c] ?? m);
  const proxyJump = first.get('proxyjump')?.[0];
  const proxyCommand = first.get('proxycommand')?.join(' ');
  const identityAgent = first.get('identityagent')?.[0];
  const identitiesOnly = first.get('identitiesonly')?.[0]?.toLowerCase();
  if (identitiesOnly !== undefined && identitiesOnly !== 'yes' && identitiesOnly !== 'no') throw new Error(`ssh config for ${name}: IdentitiesOnly ${identitiesOnly} is not yes or no.`);
  return {
    hostName,
    user,
    port,
    identityFiles: identityFiles.filter((f) => f.toLowerCase() !== 'none').map((f) => expandHome(expandTokens(f))),
    useAgent: (identityAgent ?? '').toLowerCase() !== 'none',
    identitiesOnly: identitiesOnly === 'yes',
    ...(identityAgent && identityAgent.toLowerCase() !== 'none' ? { identityAgent: expandHome(expandTokens(identityAgent)) } : {}),
    undecided: [...undecided],
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
      ...hopAgentFields(conf),
    });
  }
  return hops;
}

/** How a resolved host authenticates: its identity files and what it takes from ssh-agent. */
function agentFields(conf: ResolvedSshConfig): Pick<SshHost, 'identityFiles' | 'useAgent' | 'identitiesOnly' | 'identityAgent'> {
  return {
    identityFiles: conf.identityFiles,
    useAgent: conf.useAgent,
    ...(conf.identitiesOnly ? { identitiesOnly: true } : {}),
    ...(conf.identityAgent ? { identityAgent: conf.identityAgent } : {}),
  };
}

/** The same for a jump hop, which uses the agent unless told not to (stored only when it is not). */
function hopAgentFields(conf: ResolvedSshConfig): Omit<JumpHop, 'address' | 'port' | 'user'> {
  const { useAgent, ...rest } = agentFields(conf);
  return useAgent ? rest : { ...rest, useAgent: false };
}

/** An SshHost for the config name `alias`, with warnings for what Shoal cannot honour. */
export function hostFromSshConfig(directives: ConfigDirective[], alias: string): { host: SshHost; warnings: string[] } {
  const conf = resolveSshConfig(directives, alias);
  const warnings: string[] = [];
  if (conf.proxyCommand && !conf.proxyJump)
    warnings.push(`${alias}: ProxyCommand is not supported (only ProxyJump); Shoal will connect to ${conf.hostName}:${conf.port} directly.`);
  for (const m of conf.undecided) warnings.push(`${alias}: ${m} cannot be decided by Shoal (it runs no commands from ssh config); that block's options were not applied.`);
  return {
    host: {
      alias,
      address: conf.hostName,
      port: conf.port,
      user: conf.user,
      ...agentFields(conf),
      jump: resolveJumpChain(directives, conf.proxyJump, [alias]),
    },
    warnings,
  };
}
