import type { RunDetail } from '../protocol/runs.js';

/**
 * What differs between any number of runs, for the studio's run comparison: their summaries (name,
 * model, dataset, agents, hosts, status, duration, final results, tags) and their plans walked field by
 * field (`plan.stages[1].dataParallel`). A row per differing field, one value per run in the runs' order;
 * a field one run lacks reads "—". Arrays of plain values (a stage's layer ids) compare as one value;
 * objects and arrays of objects are walked, so a difference names the stage or layer it is about. Pure.
 */
export interface FieldDifference {
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

/** Leaves of `value` by path; arrays of plain values are one leaf. */
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

/** The rows where the columns (leaves by path) do not all agree, paths in first-seen order. */
function differingRows(columns: Array<Map<string, unknown>>): FieldDifference[] {
  const paths = [...new Set(columns.flatMap((c) => [...c.keys()]))];
  const rows: FieldDifference[] = [];
  for (const path of paths) {
    const values = columns.map((c) => show(c.get(path)));
    if (new Set(values).size > 1) rows.push({ path, values });
  }
  return rows;
}

/** What the comparison lists of a run besides its plan. */
function runFacts(d: RunDetail): Record<string, unknown> {
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

export function runDifferences(runs: RunDetail[]): FieldDifference[] {
  return differingRows(
    runs.map((d) => {
      const out = new Map<string, unknown>();
      for (const [key, value] of Object.entries(runFacts(d))) if (value !== undefined) out.set(key, value);
      flatten(d.plan, 'plan', out);
      return out;
    }),
  );
}
