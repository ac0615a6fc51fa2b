import { z } from 'zod';
import type { ClusterLinkProfile } from '../cluster/linkProfile.js';

/**
 * The studio's Cluster view over the API: SSH clusters as stored in clusters.json, adding and importing
 * hosts, and a connection test (preflight) that runs on the Node side while the view polls its progress
 * and answers trust-on-first-use questions. Only key *paths* cross this API, never key material.
 */
export const ClusterNameSchema = z
  .string()
  .min(1)
  .max(100)
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, 'a cluster name uses letters, digits, dot, dash and underscore');

export const AddHostsRequestSchema = z.object({
  cluster: ClusterNameSchema,
  /** `[user@]address[:port]` each; the user defaults to the studio's. */
  hosts: z.array(z.string().trim().min(1).max(300)).min(1).max(256),
  /** Private key path (not the key): tried after ssh-agent. */
  identityFile: z.string().trim().min(1).max(1000).optional(),
  /** Jump hosts, `user@bastion[:port]`, comma-separated for a chain. */
  jump: z.string().trim().min(1).max(1000).optional(),
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

export const TestIdSchema = z.string().regex(/^test-\d+$/);
export const TrustAnswerSchema = z.object({ testId: TestIdSchema, promptId: z.string().regex(/^trust-\d+$/), trust: z.boolean() });
export type TrustAnswer = z.infer<typeof TrustAnswerSchema>;

export interface HostView {
  alias: string;
  user: string;
  address: string;
  port: number;
  identityFiles: string[];
  useAgent: boolean;
  /** `user@address:port` of each jump hop, first first. */
  jump: string[];
}

export interface ClusterListing {
  /** Where clusters are stored (clusters.json in the user's config directory). */
  file: string;
  /** `links`: the bandwidth and latency matrix the cluster's last link survey stored, when there is one. */
  clusters: Array<{ name: string; hosts: HostView[]; links?: ClusterLinkProfile }>;
}

export type PreflightStatus = 'running' | 'ok' | 'warn' | 'fail' | 'skipped';

export interface PreflightStepView {
  step: string;
  status: PreflightStatus;
  detail: string;
}

export interface HostTestView {
  host: string;
  where?: string;
  /** Each step's latest state, in the order the steps started. */
  steps: PreflightStepView[];
  /** Set when the host is done: no step failed. */
  ok?: boolean;
  facts?: { os?: string; arch?: string; cpus?: number; memoryBytes?: number; diskFreeBytes?: number; node?: string; gpus: string[] };
}

/** An unknown host key waiting for the user: trust it (recorded in Shoal's store) or refuse it. */
export interface TrustPrompt {
  id: string;
  where: string;
  keyType: string;
  /** As `ssh-keygen -l` prints it: `SHA256:…`. */
  fingerprint: string;
}

export interface ClusterTestStatus {
  id: string;
  cluster: string;
  state: 'running' | 'done';
  hosts: HostTestView[];
  trust: TrustPrompt[];
  /** When done: hosts ready / all. */
  ready?: number;
  /** The link survey that follows preflight when two or more hosts pass it; absent for one host. */
  survey?: SurveyView;
}

/** One step of the link survey: per host (`prepare`: agent upload, `agent`: started, joined) or `links` (connect, probe). */
export interface SurveyStepView {
  host: string;
  step: string;
  status: PreflightStatus | 'progress';
  detail: string;
}

export interface SurveyView {
  /** `skipped`: fewer than two hosts passed preflight. */
  state: 'waiting' | 'running' | 'done' | 'failed' | 'skipped';
  /** Each (host, step)'s latest state, in the order they started. */
  steps: SurveyStepView[];
  /** Why it failed or was skipped. */
  detail?: string;
  /** When done: the measured matrix, as stored for the cluster. */
  profile?: ClusterLinkProfile;
}
