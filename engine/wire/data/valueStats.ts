/**
 * Facts about one column (CSV/TSV) or key (JSON Lines) gathered in the one pass that indexes a file,
 * kept in the index cache: enough to judge it as a feature (every value a number?) or a label
 * (numbers, or class names to map to indices) and to name the first offending row, without reading
 * the file again.
 */
export interface ValueStats {
  numbers: number;
  empty: number;
  /** Rows as reported to the user (see the reader: spreadsheet row numbers for tables, line numbers for JSON Lines). */
  firstEmpty?: number;
  firstText?: { row: number; value: string };
  firstNonInteger?: { row: number; value: number };
  min: number; minRow: number;
  max: number; maxRow: number;
  /** Distinct non-empty values as written, while there are at most MAX_CLASSES of them. */
  distinct: string[];
  tooManyDistinct: boolean;
}

/** More distinct labels than this is not a classification column. */
export const MAX_CLASSES = 10_000;

const NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

/** A decimal number as spreadsheets and NumPy write it ("1", "-2.5", "1e-3"); NaN for anything else. */
export function parseNumber(text: string): number {
  const t = text.trim();
  return NUMBER.test(t) ? Number(t) : NaN;
}

export class ValueStatsBuilder {
  private readonly stats: ValueStats = { numbers: 0, empty: 0, min: Infinity, minRow: 0, max: -Infinity, maxRow: 0, distinct: [], tooManyDistinct: false };
  private readonly seen = new Set<string>();

  add(raw: string | number | null | undefined, row: number): void {
    const s = this.stats;
    if (raw === null || raw === undefined || (typeof raw === 'string' && raw.trim() === '')) {
      s.empty++;
      s.firstEmpty ??= row;
      return;
    }
    const text = typeof raw === 'number' ? String(raw) : raw.trim();
    if (!s.tooManyDistinct && !this.seen.has(text)) {
      if (this.seen.size >= MAX_CLASSES) s.tooManyDistinct = true;
      else this.seen.add(text);
    }
    const v = typeof raw === 'number' ? raw : parseNumber(raw);
    if (!Number.isFinite(v)) {
      s.firstText ??= { row, value: text };
      return;
    }
    s.numbers++;
    if (!Number.isInteger(v)) s.firstNonInteger ??= { row, value: v };
    if (v < s.min) { s.min = v; s.minRow = row; }
    if (v > s.max) { s.max = v; s.maxRow = row; }
  }

  finish(): ValueStats {
    return { ...this.stats, distinct: this.stats.tooManyDistinct ? [] : [...this.seen].sort() };
  }
}

/** Class names (sorted by name) when a label column holds any text; null when it is all numbers. */
export function classNamesOf(stats: ValueStats): string[] | null {
  return stats.firstText ? stats.distinct : null;
}
