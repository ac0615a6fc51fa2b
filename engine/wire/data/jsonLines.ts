/**
 * JSON Lines of token ids for sequence models: one object per line, `{"tokens": [...], "label": ...}`
 * for a model with one input and one output, else one key per input and output layer (or what a
 * dataset.json's `"key"` names). Sequences are padded (with `padValue`, default 0) or cut to the
 * model's length — at the end by default, at the start with `"padding"`/`"truncating": "pre"` as Keras's
 * pad_sequences. A model input named as a mask (`attention_mask`, `padding_mask`, `mask`) that the lines do not
 * carry gets 1 where its token input holds a token and 0 where it was padded. Labels are class ids, class names (mapped to ids sorted by name) or numbers. The file
 * is indexed once (line offsets and per-key facts, cached with a checksum) and agents read only the
 * lines of their samples. Problems are reported by line number before anything trains.
 */
import type { DatasetDescription } from '../../data/datasetDescription.js';
import type { ModelArrays } from '../../data/modelArrays.js';
import { type Dataset, type RowSource, rowSizeOf } from './dataset.js';
import { fixedShape, pairFeeds } from './feeds.js';
import { heldOutSplits } from './heldOut.js';
import { indexRecords, recordReader } from './recordIndex.js';
import { targetEncoding } from './targetEncoding.js';
import { type ValueStats, ValueStatsBuilder } from './valueStats.js';

interface KeyStats {
  /** Lines whose value is an array (a sequence), and facts about the numbers inside. */
  sequences: number;
  minLength: number; maxLength: number;
  seqMin: number; seqMinLine: number; seqMax: number; seqMaxLine: number;
  firstNonInteger?: { line: number; value: unknown };
  /** Scalars (numbers, strings): as a table column. */
  scalars: ValueStats;
  firstMissing?: number;
}
interface LinesStats { keys: Record<string, KeyStats>; lines: number[] }

/** Input layer names that mean a padding mask (Keras's padding_mask, Hugging Face's attention_mask…). */
const MASK_NAME = /(^|[_\-/.])mask$/i;

class KeyBuilder {
  s: Omit<KeyStats, 'scalars'> = { sequences: 0, minLength: Infinity, maxLength: 0, seqMin: Infinity, seqMinLine: 0, seqMax: -Infinity, seqMaxLine: 0 };
  scalars = new ValueStatsBuilder();
  add(v: unknown, line: number): void {
    if (v === undefined || v === null) { this.s.firstMissing ??= line; return; }
    if (!Array.isArray(v)) { this.scalars.add(typeof v === 'number' || typeof v === 'string' ? v : JSON.stringify(v), line); return; }
    const s = this.s;
    s.sequences++;
    s.minLength = Math.min(s.minLength, v.length);
    s.maxLength = Math.max(s.maxLength, v.length);
    for (const x of v) {
      if (typeof x !== 'number' || !Number.isFinite(x)) { s.firstNonInteger ??= { line, value: x }; continue; }
      if (!Number.isInteger(x)) s.firstNonInteger ??= { line, value: x };
      if (x < s.seqMin) { s.seqMin = x; s.seqMinLine = line; }
      if (x > s.seqMax) { s.seqMax = x; s.seqMaxLine = line; }
    }
  }
}

export interface JsonLinesDataset extends Dataset { classes: Record<string, string[]> }

export function openJsonLines(path: string, description: DatasetDescription, arrays: ModelArrays, seed: number): JsonLinesDataset {
  const decoder = new TextDecoder('utf-8');
  const index = indexRecords<LinesStats>(path, 'lines', 'jsonl:1', () => {
    const keys = new Map<string, KeyBuilder>();
    const lines: number[] = [];
    return {
      record(bytes, r, line) {
        let obj: unknown;
        try {
          obj = JSON.parse(decoder.decode(bytes));
        } catch (err) {
          throw new Error(`${path} line ${line}: not valid JSON (${(err as Error).message}). Each line must be one JSON object, e.g. {"tokens": [1, 2, 3], "label": 0}.`);
        }
        if (typeof obj !== 'object' || obj === null || Array.isArray(obj)) throw new Error(`${path} line ${line}: a JSON ${Array.isArray(obj) ? 'array' : typeof obj}, not an object with keys such as "tokens" and "label".`);
        const o = obj as Record<string, unknown>;
        for (const [k, b] of keys) if (!(k in o)) b.add(undefined, line);
        for (const [k, v] of Object.entries(o)) {
          let b = keys.get(k);
          if (!b) {
            b = new KeyBuilder();
            if (r > 0) b.s.firstMissing = lines[0];
            keys.set(k, b);
          }
          b.add(v, line);
        }
        lines.push(line);
      },
      finish: () => ({ keys: Object.fromEntries([...keys].map(([k, b]) => [k, { ...b.s, scalars: b.scalars.finish() }])), lines }),
    };
  });
  const { keys, lines } = index.stats;
  const samples = index.count;
  if (!samples) throw new Error(`${path}: no lines. Write one JSON object per sample.`);
  const known = Object.keys(keys).map((k) => `"${k}"`).join(', ');
  const single = arrays.inputs.length === 1 && arrays.targets.length === 1;
  const byDefault = (fallbacks: string[]) => (a: { name: string }) => {
    const found = [...(single ? fallbacks : []), a.name].find((k) => k in keys);
    return found ? { key: found } : `no key for model layer '${a.name}': expected ${[...(single ? fallbacks : []), a.name].map((k) => `"${k}"`).join(' or ')}; the lines have ${known}.`;
  };
  // A mask input (attention_mask, padding_mask…) the lines do not carry is made from the tokens, as a tokenizer would.
  const masks = arrays.inputs.filter((a) => arrays.inputs.length > 1 && MASK_NAME.test(a.name) && !(a.name in keys) && !description.inputs?.some((f) => f.layer === a.name));
  const inputs = pairFeeds(path, 'inputs', description.inputs, arrays.inputs.filter((a) => !masks.includes(a)), byDefault(['tokens', 'input_ids', 'x']));
  const targets = pairFeeds(path, 'outputs', description.outputs, arrays.targets, byDefault(['label', 'labels', 'y']));
  const statsOf = (key: string, layer: string) => {
    const s = keys[key];
    if (!s) throw new Error(`${path}: no line has key "${key}" (for model layer '${layer}'); the lines have ${known}.`);
    if (s.firstMissing !== undefined) throw new Error(`${path} line ${s.firstMissing}: no "${key}" (model layer '${layer}'). Every line needs it.`);
    return s;
  };

  const reader = recordReader(path, index.spans);
  let lastRows: ArrayLike<number> | undefined;
  let lastObjects: Record<string, unknown>[] = [];
  const objectsOf = (rows: ArrayLike<number>) => {
    if (rows !== lastRows) {
      lastObjects = new Array(rows.length);
      reader.read(rows, (bytes, k) => { lastObjects[k] = JSON.parse(decoder.decode(bytes)) as Record<string, unknown>; });
      lastRows = rows;
    }
    return lastObjects;
  };
  const pre = description.preprocessing ?? {};
  const padValue = pre.padValue ?? 0;
  const sources = new Map<string, RowSource>();
  const notes: string[] = [];
  for (const { array, feed } of inputs) {
    const key = feed.key!;
    const s = statsOf(key, array.name);
    const shape = fixedShape(path, array, 'input');
    const length = rowSizeOf(shape);
    if (s.sequences !== samples) {
      const line = s.scalars.firstEmpty ?? s.scalars.firstText?.row ?? s.scalars.minRow;
      throw new Error(`${path} line ${line}: "${key}" is not a list of token ids (model input '${array.name}' takes sequences of ${length}).`);
    }
    if (s.firstNonInteger && array.range) throw new Error(`${path} line ${s.firstNonInteger.line}: "${key}" holds ${JSON.stringify(s.firstNonInteger.value)}, not a token id (a whole number).`);
    if (s.firstNonInteger && typeof s.firstNonInteger.value !== 'number') throw new Error(`${path} line ${s.firstNonInteger.line}: "${key}" holds ${JSON.stringify(s.firstNonInteger.value)}, not a number.`);
    if (array.range) {
      const [lo, hi] = array.range;
      if (s.seqMin < lo) throw new Error(`${path} line ${s.seqMinLine}: token id ${s.seqMin} in "${key}" is below ${lo}; model input '${array.name}' (an Embedding of ${hi + 1}) takes ids ${lo}..${hi}.`);
      if (s.seqMax > hi) throw new Error(`${path} line ${s.seqMaxLine}: token id ${s.seqMax} in "${key}" is outside ${lo}..${hi}, the vocabulary of model input '${array.name}' (Embedding inputDim ${hi + 1}). Re-tokenize or give the Embedding a larger inputDim.`);
      if (padValue < lo || padValue > hi) throw new Error(`${path}: padValue ${padValue} is outside the vocabulary ${lo}..${hi} of model input '${array.name}'.`);
    }
    sources.set(array.name, {
      rowSize: length,
      readRows(rows, out, offset, stride) {
        const objs = objectsOf(rows);
        for (let r = 0; r < rows.length; r++) {
          const seq = objs[r][key];
          if (!Array.isArray(seq)) throw new Error(`${path} line ${lines[rows[r]]}: "${key}" is not a list (did the file change under the run? fix it and resume).`);
          const at = offset + r * stride;
          out.fill(padValue, at, at + length);
          const n = Math.min(seq.length, length);
          const from = pre.truncating === 'pre' ? seq.length - n : 0;
          const to = pre.padding === 'pre' ? length - n : 0;
          for (let j = 0; j < n; j++) out[at + to + j] = seq[from + j] as number;
        }
      },
    });
    notes.push(`${array.name} ← "${key}" (lengths ${s.minLength}–${s.maxLength}, ${s.maxLength > length ? 'cut' : 'padded'} to ${length})`);
  }
  for (const mask of masks) {
    const length = rowSizeOf(fixedShape(path, mask, 'input'));
    const tokens = inputs.filter(({ array }) => rowSizeOf(array.shape) === length);
    if (tokens.length !== 1) throw new Error(`${path}: model input '${mask.name}' looks like a mask of ${length}, but ${tokens.length ? `${tokens.length} token inputs (${tokens.map((t) => `'${t.array.name}'`).join(', ')})` : 'no token input'} of that length could give it; add the key "${mask.name}" to every line.`);
    const key = tokens[0].feed.key!;
    sources.set(mask.name, {
      rowSize: length,
      readRows(rows, out, offset, stride) {
        const objs = objectsOf(rows);
        for (let r = 0; r < rows.length; r++) {
          const at = offset + r * stride;
          const n = Math.min((objs[r][key] as unknown[]).length, length);
          out.fill(0, at, at + length);
          out.fill(1, at + (pre.padding === 'pre' ? length - n : 0), at + (pre.padding === 'pre' ? length : n));
        }
      },
    });
    notes.push(`${mask.name} ← 1 where "${key}" has a token, 0 where padded`);
  }
  const classes: Record<string, string[]> = {};
  for (const { array, feed } of targets) {
    const key = feed.key!;
    const s = statsOf(key, array.name);
    const rowSize = rowSizeOf(fixedShape(path, array, 'output'));
    if (s.sequences) {
      if (s.sequences !== samples || s.minLength !== rowSize || s.maxLength !== rowSize) throw new Error(`${path}: "${key}" holds lists of ${s.minLength}–${s.maxLength} values, but model output '${array.name}' takes ${rowSize} per sample (or one class id / name per line).`);
      sources.set(array.name, {
        rowSize,
        readRows(rows, out, offset, stride) {
          const objs = objectsOf(rows);
          for (let r = 0; r < rows.length; r++) (objs[r][key] as number[]).forEach((v, j) => { out[offset + r * stride + j] = v; });
        },
      });
      notes.push(`${array.name} ← "${key}" (${rowSize} values)`);
      continue;
    }
    const enc = targetEncoding(array, s.scalars, `${path} key "${key}"`, pre.labels, 'line');
    if (enc.classes) classes[array.name] = enc.classes;
    sources.set(array.name, {
      rowSize: enc.rowSize,
      readRows(rows, out, offset, stride) {
        const objs = objectsOf(rows);
        for (let r = 0; r < rows.length; r++) enc.write(objs[r][key] as string | number, out, offset + r * stride, () => `${path} line ${lines[rows[r]]}, key "${key}"`);
      },
    });
    notes.push(`${array.name} ← "${key}" (${enc.note})`);
  }
  const splits = heldOutSplits(path, samples, sources, description.validationSplit, seed, description.validationHoldOut);
  return {
    describe: `JSON Lines ${path} (${splits.note}; ${notes.join('; ')}${index.cached ? '; index cached' : ''})`,
    arrays: [...arrays.inputs, ...arrays.targets].map((a) => ({ name: a.name, shape: a.shape, dtype: a.dtype })),
    train: splits.train,
    validation: splits.validation,
    classes,
    close: () => reader.close(),
  };
}
