/**
 * The dataset interface the agent runtime trains on: named arrays (one per model input and output
 * layer) in a train and a validation split, read by sample index. Sources (a NumPy folder, synthetic
 * data) implement it; the runtime only ever asks for the rows of the samples in its slice of a batch.
 */

/** Per-sample facts of one named array of a dataset (an input or a target). */
export interface ArraySpec {
  name: string;
  /** Per sample, no batch dim. */
  shape: number[];
  /** 'float32', 'int32', ... (NumPy's dtype names, which for these agree with tfjs's). */
  dtype: string;
}

/** One split (train or validation): samples addressed by index 0..size-1. */
export interface DataSplit {
  readonly size: number;
  /** Rows of the named arrays for the samples at `indices`, packed row by row: row r holds array names[0]'s values of sample indices[r], then names[1]'s, ... as float32. */
  gather(names: string[], indices: ArrayLike<number>): Float32Array;
}

export interface Dataset {
  /** What the data is, for logs and the run record, e.g. "NumPy folder /data/x (train 800, validation 200 held out by seed 7)". */
  describe: string;
  arrays: ArraySpec[];
  train: DataSplit;
  validation: DataSplit;
  /** For outputs fed by class names (a table's or JSON Lines' label names, image class folders): the names by class id, sorted by name. */
  classes?: Record<string, string[]>;
  close(): void;
}

/** Elements per sample of a per-sample shape ([] is a scalar: 1). */
export function rowSizeOf(shape: readonly number[]): number {
  return shape.reduce((a, b) => a * b, 1);
}

/** Something that can write rows of one array into a float32 buffer (an NpyArray, a generator). */
export interface RowSource {
  readonly rowSize: number;
  readRows(indices: ArrayLike<number>, out: Float32Array, outOffset: number, outStride: number): void;
}

/**
 * A split over row sources. `rowOf` maps split index → source row (a held-out subset of one file);
 * without it split index i is row i. Each array is read straight into its column of the packed
 * output (stride = the packed row), so a gather makes no intermediate copies.
 */
export function splitOf(label: string, size: number, sources: ReadonlyMap<string, RowSource>, rowOf?: Uint32Array): DataSplit {
  return {
    size,
    gather(names, indices) {
      const picked = names.map((name) => {
        const src = sources.get(name);
        if (!src) throw new Error(`${label}: no array named '${name}' (it has ${[...sources.keys()].map((k) => `'${k}'`).join(', ') || 'none'}).`);
        return src;
      });
      const stride = picked.reduce((a, s) => a + s.rowSize, 0);
      const rows = new Uint32Array(indices.length);
      for (let r = 0; r < indices.length; r++) {
        const i = indices[r];
        if (!Number.isInteger(i) || i < 0 || i >= size) throw new RangeError(`${label}: sample index ${i} is outside 0..${size - 1}.`);
        rows[r] = rowOf ? rowOf[i] : i;
      }
      const out = new Float32Array(indices.length * stride);
      let offset = 0;
      for (const src of picked) {
        src.readRows(rows, out, offset, stride);
        offset += src.rowSize;
      }
      return out;
    },
  };
}

/** A split with no samples (no validation data). */
export function emptySplit(label: string, names: string[]): DataSplit {
  return splitOf(label, 0, new Map(names.map((n) => [n, { rowSize: 0, readRows: () => undefined }])));
}
