import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { machineInfo, type MachineInfo } from './machine.js';
import { formatTable, type Column } from './table.js';

export type { Column } from './table.js';

/** Where every benchmark writes its JSON: bench/results/<name>.json. */
export const RESULTS_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '../results');

export interface BenchReport<Row> {
  rows: Row[];
  machine: MachineInfo;
  notes: string[];
  [extra: string]: unknown;
}

/**
 * Print a benchmark's table (and its notes, numbered) and write `bench/results/<name>.json` with the
 * rows, the machine they ran on and the notes. Returns the path written.
 */
export function report<Row>(
  name: string,
  title: string,
  rows: Row[],
  columns: Column<Row>[],
  notes: string[] = [],
  extra: Record<string, unknown> = {},
): string {
  const body: BenchReport<Row> = { rows, machine: machineInfo(), notes, ...extra };
  const m = body.machine;
  console.log(`\n${title}\n${m.cpuModel}, ${m.cores} cores, Node ${m.node}, ${m.date}\n`);
  console.log(formatTable(rows, columns));
  if (notes.length) console.log(`\n${notes.map((n, i) => `[${i + 1}] ${n}`).join('\n')}`);
  mkdirSync(RESULTS_DIR, { recursive: true });
  const path = join(RESULTS_DIR, `${name}.json`);
  writeFileSync(path, `${JSON.stringify(body, null, 2)}\n`);
  console.log(`\nwrote ${path}`);
  return path;
}
