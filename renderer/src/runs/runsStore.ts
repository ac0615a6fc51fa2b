import { create } from 'zustand';
import type { RunDetail, RunMetaUpdate, RunSummary, WeightsExport } from '../../../engine/protocol/runs';
import type { RunSort } from './runsTableModel';
import { studioClient } from '../store/actions';
import { downloadBase64 } from '../shell/download';
import { errorText } from '../store/errorText';

/**
 * The Runs overlay's data: the run folders on disk (through the studio API), the table's sort and
 * filter, the run opened, the runs ticked for comparison, and weight exports. Details are cached per run id.
 */
interface RunsState {
  runs: RunSummary[];
  loading: boolean;
  error?: string;
  /** A line about the last change (a run moved to the trash). */
  message?: string;
  opened?: string;
  compare: string[];
  details: Record<string, RunDetail>;
  exports: Record<string, WeightsExport | { error: string } | 'busy'>;
  sort: RunSort;
  query: string;
  /** Statuses shown; empty: all. */
  states: string[];
}

export const useRuns = create<RunsState>()(() => ({ runs: [], loading: false, compare: [], details: {}, exports: {}, sort: { key: 'started', descending: true }, query: '', states: [] }));

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

/** Tick or untick a run for comparison; any number may be ticked. */
export function toggleCompare(id: string): void {
  const { compare } = useRuns.getState();
  const next = compare.includes(id) ? compare.filter((c) => c !== id) : [...compare, id];
  useRuns.setState({ compare: next });
  next.forEach((c) => void loadDetail(c));
}

export function setCompare(ids: string[]): void {
  useRuns.setState({ compare: ids });
  ids.forEach((c) => void loadDetail(c));
}

/** Click a column: sort by it, or flip the direction when it is the sort already. */
export function sortBy(key: RunSort['key']): void {
  const { sort } = useRuns.getState();
  useRuns.setState({ sort: sort.key === key ? { key, descending: !sort.descending } : { key, descending: key === 'started' } });
}

/** Save a run's name, tags or notes; resolves to the server's message when it refused them. */
export async function saveRunMeta(id: string, update: RunMetaUpdate): Promise<string | undefined> {
  const client = studioClient();
  if (!client) return 'The studio is not connected.';
  try {
    const summary = await client.updateRun(id, update);
    useRuns.setState((s) => ({
      runs: s.runs.map((r) => (r.id === id ? summary : r)),
      details: s.details[id] ? { ...s.details, [id]: { ...s.details[id], summary } } : s.details,
    }));
    return undefined;
  } catch (error) {
    return errorText(error);
  }
}

/** Delete a run (to Shoal's trash, or for good); resolves to the refusal's text, if any. */
export async function deleteRun(id: string, permanently: boolean): Promise<string | undefined> {
  const client = studioClient();
  if (!client) return 'The studio is not connected.';
  try {
    const result = await client.deleteRun(id, { permanently });
    useRuns.setState((s) => {
      const { [id]: _gone, ...details } = s.details;
      return {
        details,
        opened: s.opened === id ? undefined : s.opened,
        compare: s.compare.filter((c) => c !== id),
        message: result.trashedTo ? `Run ${id} moved to ${result.trashedTo}.` : `Run ${id} deleted.`,
      };
    });
    await refreshRuns();
    return undefined;
  } catch (error) {
    return errorText(error);
  }
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
