import { z } from 'zod';
import { ClusterLinkProfileSchema } from '../cluster/linkProfile.js';
import { ClusterSettingsSchema } from './clusterSettings.js';

/**
 * The studio's Cluster view over the API: SSH clusters as stored in clusters.json, adding and importing
 * hosts, and a connection test (preflight) that runs on the Node side while the view polls its progress
 * and answers trust-on-first-use questions. Only key *paths* cross this API, never key material.
 */
export const ClusterNameSchema = z
  .string()
  .min(1, 'give the cluster a name')
  .max(100, 'a cluster name is at most 100 characters')
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, 'a cluster name starts with a letter or digit and uses letters, digits, dot, dash and underscore');

/**
 * `[user@]address[:port]` (`[::1]:2222` for IPv6), as `shoal cluster add --host` takes it; the same
 * reading as parseHostSpec (engine/node/hosts/host.ts), checked here so that a form can say it at the field.
 */
export const HostSpecSchema = z
  .string()
  .trim()
  .min(1, 'give a host as user@address[:port]')
  .max(300, 'a host is at most 300 characters')
  .superRefine((spec, ctx) => {
    const at = spec.lastIndexOf('@');
    const user = at >= 0 ? spec.slice(0, at) : 'user';
    const rest = at >= 0 ? spec.slice(at + 1) : spec;
    const m = /^\[([^\]]+)\](?::(\d+))?$/.exec(rest) ?? /^([^:[\]\s@]+)(?::(\d+))?$/.exec(rest);
    if (!m || !user || /\s/.test(user)) {
      ctx.addIssue({ code: 'custom', message: `"${spec}" is not a host: expected user@address[:port], e.g. alice@10.0.0.5:22` });
      return;
    }
    const port = m[2] === undefined ? 22 : Number(m[2]);
    if (port < 1 || port > 65535) ctx.addIssue({ code: 'custom', message: `"${spec}": port ${m[2]} is not between 1 and 65535` });
  });

/** A comma-separated jump chain, `user@bastion[:port]` each. */
const JumpSchema = z
  .string()
  .trim()
  .max(1000, 'a jump chain is at most 1,000 characters')
  .superRefine((chain, ctx) => {
    for (const hop of chain.split(',').map((s) => s.trim()).filter(Boolean)) {
      const checked = HostSpecSchema.safeParse(hop);
      if (!checked.success) ctx.addIssue({ code: 'custom', message: `jump host ${checked.error.issues[0]?.message ?? hop}` });
    }
  });

export const AddHostsRequestSchema = z.object({
  cluster: ClusterNameSchema,
  /** `[user@]address[:port]` each; the user defaults to the studio's. */
  hosts: z.array(HostSpecSchema).min(1, 'give at least one host as user@address[:port]').max(256, 'at most 256 hosts at once'),
  /** Private key path (not the key): tried after ssh-agent. */
  identityFile: z.string().trim().min(1).max(1000, 'a key path is at most 1,000 characters').optional(),
  /** Jump hosts, `user@bastion[:port]`, comma-separated for a chain. */
  jump: JumpSchema.optional(),
  /** The cluster's remote directory, setup commands and env (replacing, as `shoal cluster add` does). */
  ...ClusterSettingsSchema.shape,
});
export type AddHostsRequest = z.infer<typeof AddHostsRequestSchema>;

export const ImportHostsRequestSchema = z.object({
  cluster: ClusterNameSchema,
  /** Default ~/.ssh/config. */
  sshConfig: z.string().trim().min(1).max(1000).optional(),
  /** Host names from the config; default every concrete Host. */
  hosts: z.array(z.string().trim().min(1).max(300)).max(256).optional(),
});
export type ImportHostsRequest = z.infer<typeof ImportHostsRequestSchema>;

/** Rename a cluster (its stored link survey goes with it). */
export const RenameClusterRequestSchema = z.object({ cluster: ClusterNameSchema, to: ClusterNameSchema });
export type RenameClusterRequest = z.infer<typeof RenameClusterRequestSchema>;

export const RemoveHostRequestSchema = z.object({ cluster: ClusterNameSchema, host: z.string().trim().min(1).max(300) });
export type RemoveHostRequest = z.infer<typeof RemoveHostRequestSchema>;

/**
 * Change one host of a cluster: its address (`user@address[:port]`), key and jump chain. An identity
 * file or jump left out is kept; an empty one clears it (ssh-agent and default keys; a direct connection).
 */
export const EditHostRequestSchema = z.object({
  cluster: ClusterNameSchema,
  /** The host's alias as listed. */
  host: z.string().trim().min(1).max(300),
  address: HostSpecSchema,
  identityFile: z.string().trim().max(1000, 'a key path is at most 1,000 characters').optional(),
  jump: JumpSchema.optional(),
});
export type EditHostRequest = z.infer<typeof EditHostRequestSchema>;

/**
 * Set a cluster's remote directory, setup commands and env as a whole (the Clusters view's settings
 * form): what is left out goes back to the default (~/.shoal, no setup, no variables).
 */
export const ClusterSettingsRequestSchema = z.object({ cluster: ClusterNameSchema, ...ClusterSettingsSchema.shape });
export type ClusterSettingsRequest = z.infer<typeof ClusterSettingsRequestSchema>;

export const TestIdSchema = z.string().regex(/^test-\d+$/);
export const TrustAnswerSchema = z.object({ testId: TestIdSchema, promptId: z.string().regex(/^trust-\d+$/), trust: z.boolean() });
export type TrustAnswer = z.infer<typeof TrustAnswerSchema>;

export const HostViewSchema = z.object({
  alias: z.string(),
  user: z.string(),
  address: z.string(),
  port: z.number(),
  identityFiles: z.array(z.string()),
  useAgent: z.boolean(),
  /** `user@address:port` of each jump hop, first first. */
  jump: z.array(z.string()),
});
export type HostView = z.infer<typeof HostViewSchema>;

/** What preflight found on a host. */
export const HostFactsSchema = z.object({
  os: z.string().optional(),
  arch: z.string().optional(),
  cpus: z.number().optional(),
  memoryBytes: z.number().optional(),
  diskFreeBytes: z.number().optional(),
  node: z.string().optional(),
  gpus: z.array(z.string()),
});
export type HostFacts = z.infer<typeof HostFactsSchema>;

/** A cluster's last finished connection test, stored with the cluster (it outlives the studio session). */
export const StoredClusterTestSchema = z.object({
  /** When it finished, ms since the epoch. */
  at: z.number(),
  /** The verdicts of the hosts it tested that are still in the cluster, reached as they were then. */
  hosts: z.array(z.object({ host: z.string(), ok: z.boolean(), why: z.string().optional(), facts: HostFactsSchema.optional() })),
  /** Hosts of the cluster it does not cover: added, or changed (address, user, port, key, jumps) since. */
  untested: z.array(z.string()),
  /** The link survey after preflight: pairs measured, or why it failed or was skipped. */
  links: z.object({ state: z.enum(['done', 'failed', 'skipped']), pairs: z.number().optional(), detail: z.string().optional() }).optional(),
});
export type StoredClusterTest = z.infer<typeof StoredClusterTestSchema>;

export const ClusterListingSchema = z.object({
  /** Where clusters are stored (clusters.json in the user's config directory). */
  file: z.string(),
  /**
   * `links`: the bandwidth and latency matrix the cluster's last link survey stored, when there is one;
   * `lastTest`: what its last connection test found, as far as it still holds for the hosts as they are.
   */
  clusters: z.array(
    z.object({
      name: z.string(),
      hosts: z.array(HostViewSchema),
      links: ClusterLinkProfileSchema.optional(),
      settings: ClusterSettingsSchema.optional(),
      lastTest: StoredClusterTestSchema.optional(),
    }),
  ),
});
export type ClusterListing = z.infer<typeof ClusterListingSchema>;

/** What importing hosts from an ssh config did, beside the listing after it. */
export const ImportHostsResultSchema = ClusterListingSchema.extend({ imported: z.array(z.string()), warnings: z.array(z.string()), from: z.string() });

export const PreflightStatusSchema = z.enum(['running', 'ok', 'warn', 'fail', 'skipped']);
export type PreflightStatus = z.infer<typeof PreflightStatusSchema>;

export const PreflightStepViewSchema = z.object({ step: z.string(), status: PreflightStatusSchema, detail: z.string() });
export type PreflightStepView = z.infer<typeof PreflightStepViewSchema>;

export const HostTestViewSchema = z.object({
  host: z.string(),
  where: z.string().optional(),
  /** Each step's latest state, in the order the steps started. */
  steps: z.array(PreflightStepViewSchema),
  /** Set when the host is done: no step failed. */
  ok: z.boolean().optional(),
  facts: HostFactsSchema.optional(),
});
export type HostTestView = z.infer<typeof HostTestViewSchema>;

/** An unknown host key waiting for the user: trust it (recorded in Shoal's store) or refuse it. */
export const TrustPromptSchema = z.object({
  id: z.string(),
  where: z.string(),
  keyType: z.string(),
  /** As `ssh-keygen -l` prints it: `SHA256:…`. */
  fingerprint: z.string(),
});
export type TrustPrompt = z.infer<typeof TrustPromptSchema>;

/** One step of the link survey: per host (`prepare`: agent upload, `agent`: started, joined) or `links` (connect, probe). */
export const SurveyStepViewSchema = z.object({
  host: z.string(),
  step: z.string(),
  status: z.union([PreflightStatusSchema, z.literal('progress')]),
  detail: z.string(),
});
export type SurveyStepView = z.infer<typeof SurveyStepViewSchema>;

export const SurveyViewSchema = z.object({
  /** `skipped`: fewer than two hosts passed preflight. */
  state: z.enum(['waiting', 'running', 'done', 'failed', 'skipped']),
  /** Each (host, step)'s latest state, in the order they started. */
  steps: z.array(SurveyStepViewSchema),
  /** Why it failed or was skipped. */
  detail: z.string().optional(),
  /** When done: the measured matrix, as stored for the cluster. */
  profile: ClusterLinkProfileSchema.optional(),
});
export type SurveyView = z.infer<typeof SurveyViewSchema>;

export const ClusterTestStatusSchema = z.object({
  id: z.string(),
  cluster: z.string(),
  state: z.enum(['running', 'done']),
  hosts: z.array(HostTestViewSchema),
  trust: z.array(TrustPromptSchema),
  /** When done: hosts ready / all. */
  ready: z.number().optional(),
  /** The link survey that follows preflight when two or more hosts pass it; absent for one host. */
  survey: SurveyViewSchema.optional(),
  /** Why the finished test could not be stored with the cluster (it then lasts for this session only). */
  notStored: z.string().optional(),
});
export type ClusterTestStatus = z.infer<typeof ClusterTestStatusSchema>;
