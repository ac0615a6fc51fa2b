import { create } from 'zustand';

/**
 * Settings every chart shares, as in TensorBoard: the smoothing weight (0 = raw, up to 0.999), moved
 * by any chart's slider and remembered across sessions in localStorage.
 */
interface ChartSettings {
  smoothing: number;
  setSmoothing(weight: number): void;
}

const KEY = 'shoal.charts.smoothing';
export const MAX_SMOOTHING = 0.999;
const DEFAULT_SMOOTHING = 0.6;

function stored(): number {
  try {
    const value = Number(globalThis.localStorage?.getItem(KEY) ?? DEFAULT_SMOOTHING);
    return Number.isFinite(value) ? Math.min(MAX_SMOOTHING, Math.max(0, value)) : DEFAULT_SMOOTHING;
  } catch {
    return DEFAULT_SMOOTHING;
  }
}

export const useChartSettings = create<ChartSettings>((set) => ({
  smoothing: stored(),
  setSmoothing(weight) {
    const smoothing = Math.min(MAX_SMOOTHING, Math.max(0, weight));
    try {
      globalThis.localStorage?.setItem(KEY, String(smoothing));
    } catch {
      // Private mode or no storage: the setting lasts for this session only.
    }
    set({ smoothing });
  },
}));
