/**
 * A CSV or TSV table with a header as a dataset: numeric feature columns feed the model's inputs, a
 * label column (by name; default the last) its output — class names mapped to indices sorted by name,
 * or numbers. The file is indexed once (record byte offsets, per-column stats; cached with a checksum,
 * see recordIndex) and agents read only their samples' records by offset. Every empty or non-numeric
 * feature, unknown class count or out-of-range label is reported by row and column before anything runs.
 * Rows are numbered as a spreadsheet shows them: the header is row 1.
 */
import type { DatasetDescription, DatasetFeed } from '../../data/datasetDescription.js';
import type { ModelArray, ModelArrays } from '../../data/modelArrays.js';
import { parseRecord } from './csvRecord.js';
import { type Dataset, type RowSource, rowSizeOf } from './dataset.js';
import { fixedShape, normalizer, pairFeeds } from './feeds.js';
import { heldOutSplits } from './heldOut.js';
import { indexRecords, recordReader } from './recordIndex.js';
import { targetEncoding } from './targetEncoding.js';
import { parseNumber, type ValueStats, ValueStatsBuilder } from './valueStats.js';

interface TableStats {
  header: string[];
  columns: ValueStats[];
  badWidth?: { row: number; found: number };
}

export interface TableDataset extends Dataset {
  /** Class names by index of each output fed by class names (for naming predictions). */
  classes: Record<string, string[]>;
  sha256: string;
}

export function openCsvTable(path: string, description: DatasetDescription, arrays: ModelArrays, seed: number): TableDataset {
  const delimiter = description.format === 'tsv' ? '\t' : ',';
  const decoder = new TextDecoder('utf-8');
  const index = indexRecords<TableStats>(path, 'csv', `table:${JSON.stringify(delimiter)}:1`, () => {
    let header: string[] = [];
    let builders: ValueStatsBuilder[] = [];
    let badWidth: TableStats['badWidth'];
    return {
      record(bytes, r) {
        const fields = parseRecord(decoder.decode(bytes), delimiter);
        if (r === 0) {
          header = fields.map((f) => f.trim());
          builders = header.map(() => new ValueStatsBuilder());
          return;
        }
        if (fields.length !== header.length) badWidth ??= { row: r + 1, found: fields.length };
        for (let c = 0; c < header.length; c++) builders[c].add(fields[c], r + 1);
      },
      finish: () => ({ header, columns: builders.map((b) => b.finish()), ...(badWidth ? { badWidth } : {}) }),
    };
  });
  const { header, columns, badWidth } = index.stats;
  const samples = index.count - 1;
  if (header.length === 0 || samples < 1) throw new Error(`${path}: no data rows under the header. A table needs a header row and one row per sample.`);
  if (badWidth) throw new Error(`${path} row ${badWidth.row}: ${badWidth.found} fields, but the header has ${header.length} (${header.join(', ')}). A short or long row usually means an unquoted ${delimiter === ',' ? 'comma' : 'tab'} or a missing field; quote fields that contain the delimiter.`);
  const dup = header.find((h, i) => header.indexOf(h) !== i);
  if (dup !== undefined) throw new Error(`${path}: the header names column '${dup}' twice; give every column a distinct name.`);
  const col = (name: string, role: string) => {
    const c = header.indexOf(name);
    if (c < 0) throw new Error(`${path}: no column '${name}' (${role}); the header has ${header.map((h) => `'${h}'`).join(', ')}.`);
    return c;
  };

  // Labels first: the default features are every other numeric column.
  const targets = pairFeeds(path, 'outputs', description.outputs, arrays.targets, () =>
    arrays.targets.length === 1 ? { columns: [header[header.length - 1]] } : `the model has ${arrays.targets.length} outputs (${arrays.targets.map((a) => `'${a.name}'`).join(', ')}); name each one's label column in a dataset.json "outputs".`);
  const labelCols = new Set(targets.flatMap(({ feed }) => feed.columns!.map((c) => col(c, `label of model output '${feed.layer ?? targets[0].array.name}'`))));
  const skipped: string[] = [];
  const inputs = pairFeeds(path, 'inputs', description.inputs, arrays.inputs, () => {
    if (arrays.inputs.length !== 1) return `the model has ${arrays.inputs.length} inputs; name each one's columns in a dataset.json "inputs".`;
    const numeric = header.filter((h, c) => {
      if (labelCols.has(c)) return false;
      const ok = columns[c].numbers > 0 && !columns[c].firstText;
      if (!ok) skipped.push(h);
      return ok;
    });
    if (!numeric.length) return `no numeric feature columns besides the label (${header.join(', ')}).`;
    return { columns: numeric } as DatasetFeed;
  });

  const sources = new Map<string, RowSource>();
  const reader = recordReader(path, index.spans);
  let lastRows: ArrayLike<number> | undefined;
  let lastFields: string[][] = [];
  const fieldsOf = (rows: ArrayLike<number>): string[][] => {
    if (rows !== lastRows) {
      const records = Uint32Array.from(rows as ArrayLike<number>, (r) => r + 1);
      lastFields = new Array(rows.length);
      reader.read(records, (bytes, k) => { lastFields[k] = parseRecord(decoder.decode(bytes), delimiter); });
      lastRows = rows;
    }
    return lastFields;
  };

  const notes: string[] = [];
  const norm = normalizer(path, description.preprocessing?.normalize, inputs.reduce((a, { feed }) => a + feed.columns!.length, 0));
  let featureBase = 0;
  for (const { array, feed } of inputs) {
    const cs = feed.columns!.map((name) => col(name, `feature of model input '${array.name}'`));
    for (const c of cs) {
      if (labelCols.has(c)) throw new Error(`${path}: column '${header[c]}' is both a label and a feature of model input '${array.name}'.`);
      checkFeature(path, header[c], columns[c], array);
    }
    const shape = fixedShape(path, array, 'input');
    if (rowSizeOf(shape) !== cs.length) {
      // A column of numbers with a stray word was left out as non-numeric: the cell is the cause.
      const stray = feed === inputs[0]?.feed && !description.inputs ? header.findIndex((h, c) => skipped.includes(h) && columns[c].numbers > 0 && columns[c].firstText) : -1;
      if (stray >= 0) {
        const cell = columns[stray].firstText!;
        throw new Error(`${path} row ${cell.row}, column '${header[stray]}': "${cell.value}" is not a number, so the column was left out of the features, leaving ${cs.length} for model input '${array.name}', which takes ${rowSizeOf(shape)}. Fix that cell (a column's every value must be a number), or choose the columns with --feature-columns.`);
      }
      throw new Error(`${path}: ${cs.length} feature columns (${cs.map((c) => header[c]).join(', ')}) for model input '${array.name}', which takes ${rowSizeOf(shape)} values per sample (shape (${shape.join(', ')})). ${description.inputs ? 'List' : 'Pass --feature-columns with'} exactly ${rowSizeOf(shape)} columns.`);
    }
    const base = featureBase;
    featureBase += cs.length;
    sources.set(array.name, {
      rowSize: cs.length,
      readRows(rows, out, offset, stride) {
        const fields = fieldsOf(rows);
        for (let r = 0; r < rows.length; r++) {
          for (let j = 0; j < cs.length; j++) {
            const text = fields[r][cs[j]];
            const v = text === undefined ? NaN : parseNumber(text);
            if (!Number.isFinite(v)) throw new Error(`${path} row ${rows[r] + 2}, column '${header[cs[j]]}': "${text ?? ''}" is not a number (did the file change under the run? fix it and resume).`);
            out[offset + r * stride + j] = norm ? norm(v, base + j) : v;
          }
        }
      },
    });
    notes.push(`${array.name} ← ${cs.length} columns`);
  }
  if (skipped.length) notes.push(`non-numeric columns left out: ${skipped.join(', ')}`);

  const classes: Record<string, string[]> = {};
  for (const { array, feed } of targets) {
    const cs = feed.columns!.map((name) => col(name, `label of model output '${array.name}'`));
    const rowSize = rowSizeOf(fixedShape(path, array, 'output'));
    if (cs.length === 1) {
      const c = cs[0];
      const enc = targetEncoding(array, columns[c], `${path} column '${header[c]}'`, description.preprocessing?.labels, 'row');
      if (enc.classes) classes[array.name] = enc.classes;
      sources.set(array.name, {
        rowSize: enc.rowSize,
        readRows(rows, out, offset, stride) {
          const fields = fieldsOf(rows);
          for (let r = 0; r < rows.length; r++) enc.write(fields[r][c] ?? '', out, offset + r * stride, () => `${path} row ${rows[r] + 2}, column '${header[c]}'`);
        },
      });
      notes.push(`${array.name} ← '${header[c]}' (${enc.note})`);
    } else {
      if (cs.length !== rowSize) throw new Error(`${path}: ${cs.length} label columns for model output '${array.name}', which takes ${rowSize} values per sample.`);
      for (const c of cs) checkFeature(path, header[c], columns[c], array);
      sources.set(array.name, {
        rowSize,
        readRows(rows, out, offset, stride) {
          const fields = fieldsOf(rows);
          for (let r = 0; r < rows.length; r++) for (let j = 0; j < cs.length; j++) out[offset + r * stride + j] = parseNumber(fields[r][cs[j]] ?? '');
        },
      });
      notes.push(`${array.name} ← ${cs.length} columns`);
    }
  }

  const splits = heldOutSplits(path, samples, sources, description.validationSplit, seed, description.validationHoldOut);
  const all = [...arrays.inputs, ...arrays.targets];
  return {
    describe: `${description.format === 'tsv' ? 'TSV' : 'CSV'} table ${path} (${splits.note}; ${notes.join('; ')}${index.cached ? '; index cached' : ''})`,
    arrays: all.map((a) => ({ name: a.name, shape: a.shape, dtype: a.dtype })),
    train: splits.train,
    validation: splits.validation,
    classes,
    sha256: index.sha256,
    close: () => reader.close(),
  };
}

/** A feature column: every value a number; ids of an Embedding's input whole and in its range. */
function checkFeature(path: string, name: string, s: ValueStats, array: ModelArray): void {
  const at = `${path} row`;
  if (s.firstEmpty !== undefined) throw new Error(`${at} ${s.firstEmpty}, column '${name}': missing value (${s.empty} empty in this column). Fill them in (or drop those rows) before training; Shoal does not guess missing features.`);
  if (s.firstText) throw new Error(`${at} ${s.firstText.row}, column '${name}': "${s.firstText.value}" is not a number. Feature columns must be numeric; encode categories as numbers, or leave the column out with --feature-columns.`);
  if (array.range) {
    if (s.firstNonInteger) throw new Error(`${at} ${s.firstNonInteger.row}, column '${name}': ${s.firstNonInteger.value} is not a whole number, but model layer '${array.name}' takes integer ids.`);
    if (s.min < array.range[0] || s.max > array.range[1]) {
      const [v, row] = s.min < array.range[0] ? [s.min, s.minRow] : [s.max, s.maxRow];
      throw new Error(`${at} ${row}, column '${name}': ${v} is outside ${array.range[0]}..${array.range[1]}, which model layer '${array.name}' accepts.`);
    }
  }
}
