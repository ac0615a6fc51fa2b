import { create } from 'zustand';
import type { ModelGraph } from '../../../engine/model/graph';
import type { ZooEntry } from '../../../engine/model/zoo';
import type { Plan } from '../../../engine/plan/plan';
import type { StudioInfo } from '../../../engine/protocol/studioApi';
import type { ClusterChoice } from './clusters';
import { DEFAULT_DATA, type DataChoice } from './dataChoice';
import type { JobMetrics } from './metrics';

export const PRESETS = ['pp1-dp1', 'pp2-dp1', 'pp2-dp2', 'pp2-dp2-m8'] as const;
export type PresetName = (typeof PRESETS)[number];

export type Connection =
  | { state: 'connecting' }
  | { state: 'connected'; shell: 'electron' | 'web' }
  | { state: 'failed'; message: string };

export interface JobView {
  /** Unknown while the start request is in flight. */
  id?: string;
  model: string;
  /** Where the plan came from: a preset, "auto-plan #1", with "(edited)" when the user changed it. */
  planLabel: string;
  agents: number;
  /** The plan's schedule: an asynchronous pipeline cannot be resized. */
  schedule?: 'gpipe' | '1f1b' | 'async';
  /** The plan the job runs (unknown for a job re-attached after a reload). */
  plan?: Plan;
  /** When it started (epoch ms): the Monitor names the run it shows by it. */
  startedAt?: number;
  metrics: JobMetrics;
}

export interface StudioState {
  connection: Connection;
  info?: StudioInfo;
  models: ZooEntry[];
  modelName?: string;
  model?: ModelGraph;
  modelError?: string;
  preset: PresetName;
  /** The cluster the plan is made, validated and priced for. */
  cluster: ClusterChoice;
  agents: number;
  epochs: number;
  /** What Train trains on, and the loss for outputs the model file gives none. */
  data: DataChoice;
  job?: JobView;
  /** The last error of an action (start, stop), shown in the status line. */
  actionError?: string;
  set(partial: Partial<StudioState>): void;
}

/** The studio's state. Actions that talk to the API live in actions.ts; this file holds data only. */
export const useStudio = create<StudioState>()((set) => ({
  connection: { state: 'connecting' },
  models: [],
  preset: 'pp2-dp2',
  cluster: 'local',
  agents: 2,
  epochs: 5,
  data: DEFAULT_DATA,
  set: (partial) => set(partial),
}));
