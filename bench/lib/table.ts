/** One column of a printed table: which row field, its heading, and how to show a value. */
export interface Column<Row> {
  key: keyof Row & string;
  title: string;
  /** Numbers default to right-aligned, everything else to left. */
  align?: 'left' | 'right';
  format?: (value: Row[keyof Row], row: Row) => string;
}

function show<Row>(column: Column<Row>, row: Row): string {
  const value = row[column.key];
  if (column.format) return column.format(value, row);
  if (value === undefined || value === null) return '—';
  if (typeof value === 'number') return Number.isInteger(value) ? String(value) : value.toFixed(2);
  return String(value);
}

/**
 * Format rows as an aligned plain-text table (header, rule, rows), ready to print to a terminal or
 * paste in a report. Column widths fit the widest cell.
 */
export function formatTable<Row>(rows: Row[], columns: Column<Row>[]): string {
  const cells = rows.map((row) => columns.map((c) => show(c, row)));
  const widths = columns.map((c, i) => Math.max(c.title.length, ...cells.map((r) => r[i].length)));
  const rightAligned = columns.map((c) => c.align === 'right' || (c.align === undefined && rows.some((r) => typeof r[c.key] === 'number')));
  const line = (parts: string[]) =>
    parts.map((p, i) => (rightAligned[i] ? p.padStart(widths[i]) : p.padEnd(widths[i]))).join('  ').trimEnd();
  return [line(columns.map((c) => c.title)), widths.map((w) => '-'.repeat(w)).join('  '), ...cells.map(line)].join('\n');
}
