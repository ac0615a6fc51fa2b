/**
 * A reader for NumPy `.npy` files that reads only the rows a batch needs.
 *
 * Datasets can be far larger than an agent's memory, and every agent of a plan reads only its own
 * slice of each batch, so the file is never loaded whole: rows are read with positional `readSync`
 * on a file descriptor, runs of consecutive rows in one call, and converted to float32 (what the
 * training kernels consume). Format: https://numpy.org/doc/stable/reference/generated/numpy.lib.format.html
 */
import { closeSync, fstatSync, openSync, readSync, writeFileSync } from 'node:fs';
import { endianness } from 'node:os';

const MAGIC = '\x93NUMPY';
/** Scratch size for one read: large enough to amortise the syscall, small enough to stay in cache. */
const CHUNK_BYTES = 1 << 20;

type Kind = 'f2' | 'f4' | 'f8' | 'i1' | 'i2' | 'i4' | 'i8' | 'u1' | 'u2' | 'u4' | 'u8' | 'b1';
const ITEM_BYTES: Record<Kind, number> = { f2: 2, f4: 4, f8: 8, i1: 1, i2: 2, i4: 4, i8: 8, u1: 1, u2: 2, u4: 4, u8: 8, b1: 1 };
const DTYPE_NAME: Record<Kind, string> = {
  f2: 'float16', f4: 'float32', f8: 'float64', i1: 'int8', i2: 'int16', i4: 'int32', i8: 'int64',
  u1: 'uint8', u2: 'uint16', u4: 'uint32', u8: 'uint64', b1: 'bool',
};

/** One `.npy` file opened for row reads. Row = sample = one index along the first axis. */
export interface NpyArray {
  readonly path: string;
  /** NumPy's name of the dtype (str(x.dtype)): 'float32', 'int64', 'uint8', 'bool', ... */
  readonly dtype: string;
  /** The dtype as the header spells it, e.g. '<f4' or '|u1'. */
  readonly descr: string;
  /** Full shape; shape[0] is the number of samples. */
  readonly shape: number[];
  /** shape[0], for convenience. */
  readonly samples: number;
  /** Elements per sample: the product of shape[1..]. */
  readonly rowSize: number;
  /** Row indices[r] goes to out[outOffset + r*outStride ..+rowSize), converted to float32. */
  readRows(indices: ArrayLike<number>, out: Float32Array, outOffset?: number, outStride?: number): void;
  /** Rows start..start+count-1, laid out as readRows would (used to stream through a file). */
  readRange(start: number, count: number, out: Float32Array, outOffset?: number, outStride?: number): void;
  close(): void;
}

/** Python-style shape, as NumPy users read it: (5,), (3, 2), (). */
export function formatShape(shape: readonly number[]): string {
  return shape.length === 1 ? `(${shape[0]},)` : `(${shape.join(', ')})`;
}

function dtypeKind(path: string, descr: string): Kind {
  const order = descr[0];
  const kind = descr.slice(1) as Kind;
  const known = kind in ITEM_BYTES;
  if (/^[<>|=]?[OUSVaMm]/.test(descr)) {
    throw new Error(`${path}: dtype '${descr}' holds objects, strings, bytes or dates, not numbers; Shoal reads numeric arrays only. ` +
      `Convert it first (class names to integer ids, e.g. np.unique(y, return_inverse=True)[1].astype(np.int32)) and np.save the result.`);
  }
  if (order === '>' && known && ITEM_BYTES[kind] > 1) {
    throw new Error(`${path}: dtype '${descr}' is big-endian; Shoal reads little-endian files only. ` +
      `Save it as little-endian: np.save(path, x.astype('<${kind}')).`);
  }
  if (!known || !'<>|='.includes(order)) {
    throw new Error(`${path}: dtype '${descr}' is not supported (Shoal reads float16/32/64, int8/16/32/64, uint8/16/32/64 and bool). ` +
      `Convert it, e.g. np.save(path, x.astype(np.float32)).`);
  }
  return kind;
}

function parseHeader(path: string, header: string): { descr: string; fortran: boolean; shape: number[] } {
  if (/['"]descr['"]\s*:\s*\[/.test(header)) {
    throw new Error(`${path}: holds a structured (record) array; Shoal reads plain numeric arrays. ` +
      `Save each field as its own file: np.save('name.npy', np.ascontiguousarray(x['field'])).`);
  }
  const descr = /['"]descr['"]\s*:\s*(['"])(.*?)\1/.exec(header)?.[2];
  const fortran = /['"]fortran_order['"]\s*:\s*(True|False)/.exec(header)?.[1];
  const shapeText = /['"]shape['"]\s*:\s*\(([^)]*)\)/.exec(header)?.[1];
  if (descr === undefined || fortran === undefined || shapeText === undefined) {
    throw new Error(`${path}: malformed .npy header ${JSON.stringify(header.trim())}. Write the file again with np.save.`);
  }
  const shape = shapeText.split(',').map((s) => s.trim().replace(/L$/, '')).filter((s) => s !== '').map(Number);
  if (shape.some((d) => !Number.isSafeInteger(d) || d < 0)) throw new Error(`${path}: malformed shape (${shapeText}) in the .npy header. Write the file again with np.save.`);
  return { descr, fortran: fortran === 'True', shape };
}

/** Copy `count` rows of raw little-endian items from `src` into float32 `out`, rows `stride` apart. */
function convert(kind: Kind, src: ArrayBuffer, count: number, rowSize: number, out: Float32Array, offset: number, stride: number): void {
  const n = count * rowSize;
  if (kind === 'i8' || kind === 'u8') {
    const v = kind === 'i8' ? new BigInt64Array(src, 0, n) : new BigUint64Array(src, 0, n);
    for (let r = 0; r < count; r++) for (let j = 0, d = offset + r * stride, s = r * rowSize; j < rowSize; j++) out[d + j] = Number(v[s + j]);
    return;
  }
  let v: ArrayLike<number>;
  switch (kind) {
    case 'f4': v = new Float32Array(src, 0, n); break;
    case 'f8': v = new Float64Array(src, 0, n); break;
    case 'i1': v = new Int8Array(src, 0, n); break;
    case 'i2': v = new Int16Array(src, 0, n); break;
    case 'i4': v = new Int32Array(src, 0, n); break;
    case 'u2': v = new Uint16Array(src, 0, n); break;
    case 'u4': v = new Uint32Array(src, 0, n); break;
    case 'f2': v = halfToFloat(new Uint16Array(src, 0, n)); break;
    default: v = new Uint8Array(src, 0, n); // u1, b1 (NumPy stores bools as bytes 0/1)
  }
  if (stride === rowSize && v instanceof Float32Array) { out.set(v, offset); return; }
  for (let r = 0; r < count; r++) for (let j = 0, d = offset + r * stride, s = r * rowSize; j < rowSize; j++) out[d + j] = v[s + j];
}

const FLOAT_KINDS: ReadonlySet<Kind> = new Set(['f2', 'f4', 'f8']);

/**
 * A NaN or infinity in a float array would turn the loss into NaN steps later, naming nothing: the
 * read that meets one fails with the file, the sample and its place in the row (float64 beyond
 * float32's range arrives here as infinity too).
 */
function refuseNonFinite(path: string, out: Float32Array, firstRow: number, rows: number, rowSize: number, offset: number, stride: number): void {
  for (let r = 0; r < rows; r++) {
    for (let j = 0, d = offset + r * stride; j < rowSize; j++) {
      const v = out[d + j];
      if (v - v !== 0) {
        throw new Error(`${path}: sample ${firstRow + r} (row ${firstRow + r} of the array), value ${j} of ${rowSize} is ${v}; every value must be a finite number (float32). ` +
          'Replace or drop missing values before saving (e.g. x[np.isnan(x)] = 0, or keep rows np.isfinite(x).all(axis=1)), then train again or resume.');
      }
    }
  }
}

function halfToFloat(h: Uint16Array): Float32Array {
  const out = new Float32Array(h.length);
  for (let i = 0; i < h.length; i++) {
    const x = h[i], sign = x & 0x8000 ? -1 : 1, exp = (x >> 10) & 0x1f, frac = x & 0x3ff;
    out[i] = exp === 0 ? sign * frac * 2 ** -24 : exp === 31 ? (frac ? NaN : sign * Infinity) : sign * (1 + frac / 1024) * 2 ** (exp - 15);
  }
  return out;
}

/**
 * Open a `.npy` file and check its header; the data stays on disk until rows are read. `region` opens
 * an .npy stored inside another file (an uncompressed .npz member): its byte range and the name to
 * report it by.
 */
export function openNpy(file: string, region?: { start: number; length: number; name: string }): NpyArray {
  const path = region?.name ?? file;
  const base = region?.start ?? 0;
  if (endianness() !== 'LE') throw new Error(`${path}: this reader assumes a little-endian host.`);
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch (err) {
    throw new Error(`Cannot open ${file}: ${(err as Error).message}`);
  }
  try {
    const fileBytes = region?.length ?? fstatSync(fd).size;
    const pre = Buffer.alloc(12);
    readSync(fd, pre, 0, 12, base);
    if (pre.toString('latin1', 0, 6) !== MAGIC) {
      const hint = pre.toString('latin1', 0, 2) === 'PK' ? ' It looks like an .npz archive: save each array with np.save instead of np.savez.' : '';
      throw new Error(`${path}: not a NumPy .npy file (it does not start with the \\x93NUMPY magic).${hint} Save arrays with np.save(path, x).`);
    }
    const major = pre[6];
    if (major < 1 || major > 3) throw new Error(`${path}: .npy format version ${major}.${pre[7]} is not one Shoal reads (1.0 to 3.0). Save it with np.save from NumPy ≥ 1.9.`);
    const headerStart = major === 1 ? 10 : 12;
    const headerLen = major === 1 ? pre.readUInt16LE(8) : pre.readUInt32LE(8);
    const dataStart = headerStart + headerLen;
    if (fileBytes < dataStart) throw new Error(`${path}: truncated: the file ends inside its .npy header (${fileBytes} bytes). Copy or np.save it again.`);
    const headerBuf = Buffer.alloc(headerLen);
    readSync(fd, headerBuf, 0, headerLen, base + headerStart);
    const header = headerBuf.toString(major === 3 ? 'utf8' : 'latin1');
    const { descr, fortran, shape } = parseHeader(path, header);
    const kind = dtypeKind(path, descr);
    if (fortran && shape.filter((d) => d > 1).length > 1) {
      throw new Error(`${path}: stored in Fortran (column-major) order; Shoal reads C-order rows only. ` +
        `Save it in C order: np.save(path, np.ascontiguousarray(x)).`);
    }
    if (shape.length === 0) throw new Error(`${path}: holds a single value (a 0-d array), not samples. Save an array whose first axis indexes the samples.`);
    const samples = shape[0];
    const rowSize = shape.slice(1).reduce((a, b) => a * b, 1);
    const item = ITEM_BYTES[kind];
    const rowBytes = rowSize * item;
    const dataBytes = samples * rowBytes;
    if (fileBytes - dataStart < dataBytes) {
      throw new Error(`${path}: truncated: the header promises shape ${formatShape(shape)} of '${descr}' (${dataBytes} bytes of data) ` +
        `but the file holds ${fileBytes - dataStart}. Copy it again or np.save it again (was a copy interrupted?).`);
    }
    return makeArray(path, fd, descr, kind, shape, rowSize, rowBytes, base + dataStart);
  } catch (err) {
    closeSync(fd);
    throw err;
  }
}

function makeArray(path: string, fd: number, descr: string, kind: Kind, shape: number[], rowSize: number, rowBytes: number, dataStart: number): NpyArray {
  const samples = shape[0];
  const rowsPerChunk = Math.max(1, Math.floor(CHUNK_BYTES / Math.max(1, rowBytes)));
  // Own ArrayBuffer (not Buffer's shared pool) so typed views over it are always aligned.
  const scratch = new ArrayBuffer(Math.max(8, Math.min(samples, rowsPerChunk) * rowBytes));
  const scratchBytes = new Uint8Array(scratch);
  let open = true;

  /** Read `count` consecutive rows from `first`, chunk by chunk, into out at row slots `slot`.. */
  const readRun = (first: number, count: number, out: Float32Array, outOffset: number, stride: number) => {
    for (let done = 0; done < count; ) {
      const rows = Math.min(rowsPerChunk, count - done);
      const want = rows * rowBytes;
      let got = 0;
      while (got < want) {
        const n = readSync(fd, scratchBytes, got, want - got, dataStart + (first + done) * rowBytes + got);
        if (n === 0) throw new Error(`${path}: truncated while reading rows ${first + done}..${first + done + rows - 1} (did the file change under the run?). Write it again with np.save.`);
        got += n;
      }
      convert(kind, scratch, rows, rowSize, out, outOffset + done * stride, stride);
      if (FLOAT_KINDS.has(kind)) refuseNonFinite(path, out, first + done, rows, rowSize, outOffset + done * stride, stride);
      done += rows;
    }
  };
  const check = (out: Float32Array, rows: number, outOffset: number, stride: number) => {
    if (!open) throw new Error(`${path}: read after close().`);
    if (rows > 0 && outOffset + (rows - 1) * stride + rowSize > out.length) throw new RangeError(`${path}: output buffer too small for ${rows} rows.`);
  };
  const badIndex = (i: number) => new RangeError(`${path}: row index ${i} is outside 0..${samples - 1}.`);

  return {
    path, dtype: DTYPE_NAME[kind], descr, shape, samples, rowSize,
    readRows(indices, out, outOffset = 0, outStride = rowSize) {
      check(out, indices.length, outOffset, outStride);
      for (let r = 0; r < indices.length; ) {
        const first = indices[r];
        if (!Number.isInteger(first) || first < 0 || first >= samples) throw badIndex(first);
        let run = 1; // coalesce first, first+1, ... into one positional read
        while (r + run < indices.length && indices[r + run] === first + run && first + run < samples) run++;
        readRun(first, run, out, outOffset + r * outStride, outStride);
        r += run;
      }
    },
    readRange(start, count, out, outOffset = 0, outStride = rowSize) {
      check(out, count, outOffset, outStride);
      if (!Number.isInteger(start) || start < 0 || !Number.isInteger(count) || count < 0 || start + count > samples) throw badIndex(start + count - 1);
      readRun(start, count, out, outOffset, outStride);
    },
    close() {
      if (open) closeSync(fd);
      open = false;
    },
  };
}

export type NpyWritable = Float32Array | Float64Array | Int8Array | Int16Array | Int32Array | Uint8Array | Uint16Array | Uint32Array | BigInt64Array;

function descrOf(data: NpyWritable): string {
  if (data instanceof Float32Array) return '<f4';
  if (data instanceof Float64Array) return '<f8';
  if (data instanceof Int8Array) return '|i1';
  if (data instanceof Int16Array) return '<i2';
  if (data instanceof Int32Array) return '<i4';
  if (data instanceof Uint8Array) return '|u1';
  if (data instanceof Uint16Array) return '<u2';
  if (data instanceof Uint32Array) return '<u4';
  return '<i8';
}

/**
 * Write a C-order `.npy` file as np.save does (header padded to 64 bytes). `descr`, `version` and
 * `fortranOrder` override the header, so tests can produce every variant the reader must handle.
 */
export function writeNpy(path: string, data: NpyWritable, shape: number[],
  options: { version?: 1 | 2 | 3; descr?: string; fortranOrder?: boolean } = {}): void {
  const count = shape.reduce((a, b) => a * b, 1);
  if (count !== data.length) throw new Error(`writeNpy ${path}: shape ${formatShape(shape)} needs ${count} values, got ${data.length}.`);
  const version = options.version ?? 1;
  const dict = `{'descr': '${options.descr ?? descrOf(data)}', 'fortran_order': ${options.fortranOrder ? 'True' : 'False'}, 'shape': ${formatShape(shape)}, }`;
  const pre = version === 1 ? 10 : 12;
  const body = Buffer.from(dict, version === 3 ? 'utf8' : 'latin1');
  const headerLen = Math.ceil((pre + body.length + 1) / 64) * 64 - pre;
  const head = Buffer.alloc(pre + headerLen, 0x20);
  head.write(MAGIC, 0, 'latin1');
  head[6] = version;
  head[7] = 0;
  if (version === 1) head.writeUInt16LE(headerLen, 8);
  else head.writeUInt32LE(headerLen, 8);
  body.copy(head, pre);
  head[head.length - 1] = 0x0a;
  writeFileSync(path, Buffer.concat([head, Buffer.from(data.buffer, data.byteOffset, data.byteLength)]));
}
