import { z } from 'zod';
import { HostSpecSchema } from '../../protocol/clusters.js';

/**
 * A machine reached over SSH, as Shoal stores it. Only the *paths* of identity files are kept: Shoal
 * never copies or stores private key material, so revoking a key on the user's side revokes Shoal too.
 */

/** One hop of a ProxyJump chain: connected to in order, each through the previous one. */
export const JumpHopSchema = z.strictObject({
  address: z.string().min(1),
  port: z.number().int().min(1).max(65535).default(22),
  user: z.string().min(1),
  identityFiles: z.array(z.string().min(1)).default([]),
  useAgent: z.boolean().optional(),
  identitiesOnly: z.boolean().optional(),
  identityAgent: z.string().min(1).optional(),
});

export const SshHostSchema = z.strictObject({
  /** The name the user knows the host by (an ssh config `Host`, or the address). */
  alias: z.string().min(1),
  address: z.string().min(1),
  port: z.number().int().min(1).max(65535).default(22),
  user: z.string().min(1),
  /** Private key paths, tried in order after the agent. Empty: OpenSSH's defaults (~/.ssh/id_ed25519 …). */
  identityFiles: z.array(z.string().min(1)).default([]),
  /** Offer the keys of ssh-agent (SSH_AUTH_SOCK) first; false for `IdentityAgent none`. */
  useAgent: z.boolean().default(true),
  /**
   * `IdentitiesOnly yes`: of the agent's keys offer only those of `identityFiles` (or of the default
   * ~/.ssh/id_* when none is given), so a full agent does not use up the server's MaxAuthTries.
   */
  identitiesOnly: z.boolean().optional(),
  /** `IdentityAgent <socket>`: this agent socket instead of $SSH_AUTH_SOCK (`~` and `$VAR` expanded when connecting). */
  identityAgent: z.string().min(1).optional(),
  /** ProxyJump chain, first hop first. */
  jump: z.array(JumpHopSchema).default([]),
});

export type JumpHop = z.infer<typeof JumpHopSchema>;
export type SshHost = z.infer<typeof SshHostSchema>;

/** Anything connectHost can reach: a host, or a hop of a jump chain (which has no alias or jumps). */
export interface SshEndpoint {
  address: string;
  port: number;
  user: string;
  identityFiles: string[];
  useAgent?: boolean;
  identitiesOnly?: boolean;
  identityAgent?: string;
}

/** `addr:port` as users type it (and as OpenSSH prints it), with brackets around IPv6 addresses. */
export function endpointLabel(e: { address: string; port: number }): string {
  return e.address.includes(':') ? `[${e.address}]:${e.port}` : `${e.address}:${e.port}`;
}

/**
 * Parse `[user@]address[:port]` — `[::1]:2222` for IPv6 — as given to `--host` and `--jump`.
 * Throws a message that shows the expected form.
 */
export function parseHostSpec(spec: string, defaultUser: string): { user: string; address: string; port: number } {
  // The studio's form reads hosts with this schema: the command line refuses what it refuses.
  const checked = HostSpecSchema.safeParse(spec);
  if (!checked.success) throw new Error(`${checked.error.issues[0]?.message ?? `"${spec}" is not a host`}.`);
  const at = spec.lastIndexOf('@');
  const user = at >= 0 ? spec.slice(0, at) : defaultUser;
  const rest = at >= 0 ? spec.slice(at + 1) : spec;
  const m = /^\[([^\]]+)\](?::(\d+))?$/.exec(rest) ?? /^([^:[\]]+)(?::(\d+))?$/.exec(rest);
  if (!m || !user) throw new Error(`"${spec}" is not a host: expected user@address[:port], e.g. alice@10.0.0.5:22.`);
  const port = m[2] === undefined ? 22 : Number(m[2]);
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new Error(`"${spec}": port ${m[2]} is not between 1 and 65535.`);
  return { user, address: m[1], port };
}
