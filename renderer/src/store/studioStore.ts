import { create } from 'zustand';
import type { ModelGraph } from '../../../engine/model/graph';
import type { ZooEntry } from '../../../engine/model/zoo';
import type { StudioInfo } from '../../../engine/protocol/studioApi';
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
  preset: PresetName;
  agents: number;
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
  agents: number;
  epochs: number;
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
  agents: 2,
  epochs: 5,
  set: (partial) => set(partial),
}));
