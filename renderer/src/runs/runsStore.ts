import { create } from 'zustand';
import type { RunDetail, RunSummary, WeightsExport } from '../../../engine/protocol/runs';
import { studioClient } from '../store/actions';
import { downloadBase64 } from '../shell/download';
import { errorText } from '../store/errorText';

/**
 * The Runs overlay's data: the run folders on disk (through the studio API), the run opened, the two
 * ticked for comparison, and weight exports. Details are cached per run id.
 */
interface RunsState {
  runs: RunSummary[];
  loading: boolean;
  error?: string;
  opened?: string;
  compare: string[];
  details: Record<string, RunDetail>;
  exports: Record<string, WeightsExport | { error: string } | 'busy'>;
}

export const useRuns = create<RunsState>()(() => ({ runs: [], loading: false, compare: [], details: {}, exports: {} }));

export async function refreshRuns(): Promise<void> {
  const client = studioClient();
  if (!client) return;
  useRuns.setState({ loading: true, error: undefined });
  try {
    const runs = await client.listRuns();
    // Details of runs still going are fetched again when opened.
    const details = Object.fromEntries(Object.entries(useRuns.getState().details).filter(([id]) => runs.find((r) => r.id === id)?.state === 'finished'));
    useRuns.setState({ runs, loading: false, details });
  } catch (error) {
    useRuns.setState({ loading: false, error: `Could not list runs: ${errorText(error)}` });
  }
}

export async function loadDetail(id: string): Promise<void> {
  const client = studioClient();
  if (!client || useRuns.getState().details[id]) return;
  try {
    const detail = await client.getRun(id);
    useRuns.setState((s) => ({ details: { ...s.details, [id]: detail } }));
  } catch (error) {
    useRuns.setState({ error: `Could not open run ${id}: ${errorText(error)}` });
  }
}

export function openRun(id: string): void {
  useRuns.setState({ opened: id, error: undefined });
  void loadDetail(id);
}

export function toggleCompare(id: string): void {
  const { compare } = useRuns.getState();
  const next = compare.includes(id) ? compare.filter((c) => c !== id) : [...compare, id].slice(-2);
  useRuns.setState({ compare: next });
  next.forEach((c) => void loadDetail(c));
}

export async function exportRunWeights(id: string): Promise<void> {
  const client = studioClient();
  if (!client) return;
  useRuns.setState((s) => ({ exports: { ...s.exports, [id]: 'busy' } }));
  try {
    const result = await client.exportRunWeights(id);
    useRuns.setState((s) => ({ exports: { ...s.exports, [id]: result } }));
  } catch (error) {
    useRuns.setState((s) => ({ exports: { ...s.exports, [id]: { error: errorText(error) } } }));
  }
}

export async function downloadRunWeights(id: string): Promise<void> {
  const client = studioClient();
  if (!client) return;
  try {
    const files = await client.exportedWeightFiles(id);
    for (const file of files) downloadBase64(file.name, file.base64, file.name.endsWith('.json') ? 'application/json' : 'application/octet-stream');
  } catch (error) {
    useRuns.setState((s) => ({ exports: { ...s.exports, [id]: { error: errorText(error) } } }));
  }
}
