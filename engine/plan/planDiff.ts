/**
 * What differs between two plans, field by field, for the studio's run comparison: `stages[1].dataParallel:
 * 1 → 2`. Arrays of plain values (a stage's layer ids) compare as one value; objects and arrays of
 * objects are walked, so a difference names the stage or layer it is about. Pure.
 */
export interface PlanDifference {
  path: string;
  left: string;
  right: string;
}

const MISSING = '—';

function isPlain(value: unknown): boolean {
  return value === null || typeof value !== 'object' || (Array.isArray(value) && value.every((v) => v === null || typeof v !== 'object'));
}

function show(value: unknown): string {
  if (value === undefined) return MISSING;
  if (Array.isArray(value)) return value.join(', ');
  return typeof value === 'string' ? value : JSON.stringify(value);
}

function walk(path: string, left: unknown, right: unknown, out: PlanDifference[]): void {
  if (left === undefined && right === undefined) return;
  if (left === undefined || right === undefined || isPlain(left) || isPlain(right)) {
    if (JSON.stringify(left) !== JSON.stringify(right)) out.push({ path: path || '(plan)', left: show(left), right: show(right) });
    return;
  }
  if (Array.isArray(left) || Array.isArray(right)) {
    const a = Array.isArray(left) ? left : [];
    const b = Array.isArray(right) ? right : [];
    for (let i = 0; i < Math.max(a.length, b.length); i++) walk(`${path}[${i}]`, a[i], b[i], out);
    return;
  }
  const a = left as Record<string, unknown>;
  const b = right as Record<string, unknown>;
  const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])];
  for (const key of keys) walk(path ? `${path}.${key}` : key, a[key], b[key], out);
}

export function planDiff(left: unknown, right: unknown): PlanDifference[] {
  const out: PlanDifference[] = [];
  walk('', left, right, out);
  return out;
}
