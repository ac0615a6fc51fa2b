import { z } from 'zod';
import type { ModelGraph } from '../model/graph.js';
import type { ZooEntry } from '../model/zoo.js';
import { PlanSchema } from '../plan/plan.js';
import type { JobEvent, JobState } from './events.js';

/**
 * StudioApi: the one typed surface both shells expose to the renderer. Electron exposes it through the
 * preload bridge (IPC); the browser shell through a token-authenticated WebSocket. Requests are parsed
 * with these schemas on the Node side, whatever the shell.
 */
export const TrainRequestSchema = z.object({
  plan: PlanSchema,
  /** Local agent processes to start; must be at least the plan's agent count. */
  agents: z.number().int().min(1).max(64),
  epochs: z.number().positive().max(1000).optional(),
  steps: z.number().int().positive().optional(),
});
export type TrainRequest = z.infer<typeof TrainRequestSchema>;

export interface StudioInfo {
  version: string;
  shell: 'electron' | 'web';
  cores: number;
  /** Agents of the default "This machine" cluster: the core count, at least 2. */
  defaultAgents: number;
}

export interface JobSummary {
  id: string;
  model: string;
  state: JobState;
  startedAt: number;
  agents: number;
  events: number;
}

export interface StudioApi {
  info(): Promise<StudioInfo>;
  listModels(): Promise<ZooEntry[]>;
  getModel(name: string): Promise<ModelGraph>;
  startTraining(request: TrainRequest): Promise<{ jobId: string }>;
  stopJob(jobId: string): Promise<void>;
  listJobs(): Promise<JobSummary[]>;
  /** Events of a job from index `since` on: how a re-attaching view back-fills its charts. */
  jobEvents(jobId: string, since: number): Promise<JobEvent[]>;
  /** Live events of every job; returns the function that unsubscribes. */
  onJobEvent(listener: (jobId: string, event: JobEvent) => void): () => void;
}

/** The request/response methods (everything but the subscription), by name. */
export type StudioMethod = Exclude<keyof StudioApi, 'onJobEvent'>;
export const STUDIO_METHODS: StudioMethod[] = ['info', 'listModels', 'getModel', 'startTraining', 'stopJob', 'listJobs', 'jobEvents'];

/** Wire format shared by the WebSocket shell and Electron IPC. */
export const RpcCallSchema = z.object({
  kind: z.literal('call'),
  id: z.number().int(),
  method: z.enum(STUDIO_METHODS as [StudioMethod, ...StudioMethod[]]),
  params: z.array(z.unknown()).max(4),
});
export type RpcCall = z.infer<typeof RpcCallSchema>;
export type RpcResult =
  | { kind: 'result'; id: number; ok: true; value: unknown }
  | { kind: 'result'; id: number; ok: false; error: string };
export type RpcEvent = { kind: 'event'; jobId: string; event: JobEvent };
export type RpcServerMessage = RpcResult | RpcEvent;
