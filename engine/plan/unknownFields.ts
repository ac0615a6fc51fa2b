import type { z } from 'zod';

/** A field a document has and its schema does not know, with the known name it most likely means. */
export interface UnknownField {
  /** `stages[0].dataparallel`, the way a person reads a JSON path. */
  path: string;
  key: string;
  suggestion?: string;
}

interface Def {
  type: string;
  shape?: Record<string, z.ZodType>;
  innerType?: z.ZodType;
  element?: z.ZodType;
  valueType?: z.ZodType;
  options?: z.ZodType[];
  discriminator?: string;
  in?: z.ZodType;
}

const defOf = (schema: z.ZodType): Def => (schema as unknown as { _zod: { def: Def } })._zod.def;
const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Every field of `input` that `schema` would silently drop (zod objects strip unknown keys), found by
 * walking the two together: objects, arrays, records, optional and default wrappers, and discriminated
 * unions (by their discriminator). A misspelt optional field such as `gradientClipnorm` would otherwise
 * mean "no clipping" without a word. Stops after `limit` findings.
 */
export function unknownFields(schema: z.ZodType, input: unknown, limit = 100): UnknownField[] {
  const found: UnknownField[] = [];
  const walk = (s: z.ZodType, value: unknown, path: string): void => {
    if (found.length >= limit) return;
    const def = defOf(s);
    switch (def.type) {
      case 'optional':
      case 'default':
      case 'nullable':
      case 'readonly':
        return walk(def.innerType!, value, path);
      case 'pipe':
        return walk(def.in!, value, path);
      case 'array':
        if (Array.isArray(value)) value.forEach((v, i) => walk(def.element!, v, `${path}[${i}]`));
        return;
      case 'record':
        if (isRecord(value)) for (const [k, v] of Object.entries(value)) walk(def.valueType!, v, `${path}.${k}`);
        return;
      case 'union': {
        if (!def.discriminator || !isRecord(value)) return;
        const tag = value[def.discriminator];
        const option = def.options!.find((o) => {
          const literal = defOf(o).shape?.[def.discriminator!];
          return literal !== undefined && (literal as unknown as { _zod: { def: { values?: unknown[] } } })._zod.def.values?.includes(tag);
        });
        if (option) walk(option, value, path);
        return;
      }
      case 'object': {
        if (!isRecord(value)) return;
        const known = Object.keys(def.shape!);
        for (const [k, v] of Object.entries(value)) {
          if (found.length >= limit) return;
          const at = path ? `${path}.${k}` : k;
          // Own keys only: "constructor" or "__proto__" must not find Object's members.
          if (Object.hasOwn(def.shape!, k)) walk(def.shape![k], v, at);
          else found.push({ path: at, key: k, ...suggestionFor(k, known) });
        }
        return;
      }
      default:
        return;
    }
  };
  walk(schema, input, '');
  return found;
}

function suggestionFor(key: string, known: string[]): { suggestion?: string } {
  const best = closestName(key, known);
  return best === undefined ? {} : { suggestion: best };
}

/**
 * The known name closest to `name`: a case-insensitive match first, else the smallest edit distance if
 * it is at most a third of the name's length (so `gradientClipnorm` → gradientClipNorm, `dataparalel` →
 * dataParallel, but `colour` suggests nothing).
 */
export function closestName(name: string, known: readonly string[]): string | undefined {
  const lower = name.toLowerCase();
  const exact = known.find((k) => k.toLowerCase() === lower);
  if (exact) return exact;
  let best: string | undefined;
  let bestDistance = Math.max(1, Math.floor(name.length / 3)) + 1;
  for (const k of known) {
    const d = editDistance(lower, k.toLowerCase(), bestDistance);
    if (d < bestDistance) {
      best = k;
      bestDistance = d;
    }
  }
  return best;
}

/** Levenshtein distance, giving up (returning `cap`) once it cannot be under `cap`; names are short. */
function editDistance(a: string, b: string, cap: number): number {
  if (Math.abs(a.length - b.length) >= cap || a.length > 200 || b.length > 200) return cap;
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) row.push(Math.min(previous[j] + 1, row[j - 1] + 1, previous[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1)));
    if (Math.min(...row) >= cap) return cap;
    previous = row;
  }
  return Math.min(previous[b.length], cap);
}
