import type { RunSummary } from '../../../engine/protocol/runs';

/**
 * The Runs table's columns as data: what each sorts by and what the filter searches, so the table,
 * the compare view and the tests share one reading of a run. Pure.
 */
export type RunColumn = 'name' | 'model' | 'dataset' | 'plan' | 'agents' | 'hosts' | 'started' | 'duration' | 'status' | 'loss' | 'metric' | 'tags' | 'notes';

/**
 * `priority`: 1 always shown; 2 and 3 are left out of a narrow table (2 below 1000 px, 3 below 1100 px
 * of table width: runs.css), their values still shown in the run's detail, so nothing needs a sideways scroll.
 */
export const RUN_COLUMNS: Array<{ key: RunColumn; label: string; numeric?: boolean; priority: 1 | 2 | 3 }> = [
  { key: 'name', label: 'Name', priority: 1 },
  { key: 'model', label: 'Model', priority: 1 },
  { key: 'dataset', label: 'Dataset', priority: 2 },
  { key: 'plan', label: 'Plan', priority: 1 },
  { key: 'agents', label: 'Agents', numeric: true, priority: 1 },
  { key: 'hosts', label: 'Hosts', priority: 2 },
  { key: 'started', label: 'Started', priority: 1 },
  { key: 'duration', label: 'Duration', numeric: true, priority: 1 },
  { key: 'status', label: 'Status', priority: 1 },
  { key: 'loss', label: 'Final loss', numeric: true, priority: 1 },
  { key: 'metric', label: 'Metrics', numeric: true, priority: 1 },
  { key: 'tags', label: 'Tags', priority: 3 },
  { key: 'notes', label: 'Notes', priority: 3 },
];

export interface RunSort {
  key: RunColumn;
  descending: boolean;
}

/** What a run is called in lists and legends: its name, else its id. */
export const runLabel = (run: Pick<RunSummary, 'id' | 'name'>) => run.name || run.id;

/** The headline metric: validation accuracy where there is one, else the validation loss. */
export function headlineMetric(run: RunSummary): number | undefined {
  return run.validationAccuracy ?? run.validationLoss;
}

function sortValue(run: RunSummary, key: RunColumn): string | number | undefined {
  switch (key) {
    case 'name':
      return runLabel(run).toLowerCase();
    case 'model':
      return run.model.toLowerCase();
    case 'dataset':
      return run.dataset?.toLowerCase();
    case 'plan':
      return run.planLabel;
    case 'agents':
      return run.agents;
    case 'hosts':
      return run.hosts.join(', ');
    case 'started':
      return run.createdAt;
    case 'duration':
      return run.durationMs;
    case 'status':
      return run.state;
    case 'loss':
      return run.finalLoss;
    case 'metric':
      return headlineMetric(run);
    case 'tags':
      return run.tags.join(', ').toLowerCase() || undefined;
    case 'notes':
      return run.notes?.toLowerCase();
  }
}

/** Sorted copy; runs without a value go last whichever the direction; ties keep newest first. */
export function sortRuns(runs: RunSummary[], sort: RunSort): RunSummary[] {
  const sign = sort.descending ? -1 : 1;
  return [...runs].sort((a, b) => {
    const x = sortValue(a, sort.key);
    const y = sortValue(b, sort.key);
    if (x === undefined || y === undefined || (typeof x === 'number' && Number.isNaN(x)) || (typeof y === 'number' && Number.isNaN(y))) {
      const missing = Number(x === undefined || Number.isNaN(x)) - Number(y === undefined || Number.isNaN(y));
      if (missing !== 0) return missing;
    } else if (x !== y) {
      return (typeof x === 'number' && typeof y === 'number' ? x - y : String(x).localeCompare(String(y))) * sign;
    }
    return b.createdAt.localeCompare(a.createdAt) || b.id.localeCompare(a.id);
  });
}

/**
 * Runs matching every word of `query` (case-insensitive) in any text column — name, id, model,
 * dataset, plan, hosts, status, tags, notes — and, when given, one of `states`. `tag:x` matches a tag exactly.
 */
export function filterRuns(runs: RunSummary[], query: string, states?: ReadonlySet<string>): RunSummary[] {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  return runs.filter((run) => {
    if (states && states.size > 0 && !states.has(run.state)) return false;
    const text = [run.name, run.id, run.model, run.dataset, run.planLabel, run.hosts.join(' '), run.state, run.tags.join(' '), run.notes].filter(Boolean).join('\n').toLowerCase();
    return words.every((word) => (word.startsWith('tag:') ? run.tags.some((t) => t.toLowerCase() === word.slice(4)) : text.includes(word)));
  });
}
