import type { RunDetail } from '../../../engine/protocol/runs';

/**
 * Every field that differs between any number of runs: their summaries (name, model, dataset, agents,
 * hosts, status, duration, final results, tags) and their plans walked field by field
 * (`stages[1].dataParallel`). A row per differing field, one value per run, in the runs' order. Pure.
 */
export interface RunFieldDifference {
  path: string;
  values: string[];
}

const MISSING = '—';

function isPlain(value: unknown): boolean {
  return value === null || typeof value !== 'object' || (Array.isArray(value) && value.every((v) => v === null || typeof v !== 'object'));
}

function show(value: unknown): string {
  if (value === undefined) return MISSING;
  if (Array.isArray(value)) return value.join(', ');
  if (typeof value === 'number') return Number.isInteger(value) ? String(value) : String(Number(value.toPrecision(6)));
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** Leaves of `value` by path; arrays of plain values are one leaf (a stage's layer ids read as a list). */
function flatten(value: unknown, path: string, out: Map<string, unknown>): void {
  if (value === undefined) return;
  if (isPlain(value)) {
    out.set(path, value);
    return;
  }
  if (Array.isArray(value)) {
    value.forEach((v, i) => flatten(v, `${path}[${i}]`, out));
    return;
  }
  for (const [key, v] of Object.entries(value as Record<string, unknown>)) flatten(v, path ? `${path}.${key}` : key, out);
}

/** What the comparison table lists of a run besides its plan. */
function facts(d: RunDetail): Record<string, unknown> {
  const s = d.summary;
  return {
    name: s.name,
    model: s.model,
    dataset: s.dataset ?? d.dataset?.name,
    agents: s.agents,
    hosts: s.hosts,
    status: s.state,
    steps: `${s.stepsDone}/${s.steps}`,
    'duration (s)': s.durationMs === undefined ? undefined : s.durationMs / 1000,
    'final loss': s.finalLoss,
    'validation loss': s.validationLoss,
    'validation accuracy': s.validationAccuracy,
    ...Object.fromEntries(Object.entries(s.metrics ?? {}).map(([k, v]) => [`metrics.${k}`, v])),
    tags: s.tags.length ? s.tags : undefined,
    'data checksum': d.dataset?.checksum.slice(0, 12),
  };
}

export function runDifferences(runs: RunDetail[]): RunFieldDifference[] {
  const columns = runs.map((d) => {
    const out = new Map<string, unknown>();
    for (const [key, value] of Object.entries(facts(d))) if (value !== undefined) out.set(key, value);
    flatten(d.plan, 'plan', out);
    return out;
  });
  const paths: string[] = [];
  for (const column of columns) for (const path of column.keys()) if (!paths.includes(path)) paths.push(path);
  const rows: RunFieldDifference[] = [];
  for (const path of paths) {
    const values = columns.map((c) => show(c.get(path)));
    if (new Set(values).size > 1) rows.push({ path, values });
  }
  return rows;
}
