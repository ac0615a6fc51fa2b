/**
 * Where reductions add: a block of memory that a tiny WebAssembly SIMD kernel can reach. JavaScript
 * adds two Float32Arrays at about 1.2 ns per element even when both are in cache (each element is
 * widened to a double, added, narrowed and stored, with bound checks); the `f32x4.add` loop below does
 * four per instruction, about 0.15 ns per element. Wasm can only touch its own memory, so a collective
 * receives each incoming segment straight into an arena slot and adds its own values to it there: in
 * place when they live in the same memory (collectiveArray: a home arena), else copied in a block at a
 * time (a memcpy). It then sends the partial sum on from the slot, or writes the total out.
 *
 * The results are exactly JavaScript's: `f32x4.add` is IEEE binary32 addition, correctly rounded, as
 * is `dst[i] += src[i]` on Float32Arrays (the double sum rounds to the same float, since a double holds
 * more than twice float32's precision). Where the engine has no wasm SIMD, the arena is a plain
 * ArrayBuffer and the same interface adds in JavaScript.
 */

/** add(out, a, b, bytes): out[i] = a[i] + b[i] for float32 at byte addresses; bytes a multiple of 64. */
function kernelBytes(): Uint8Array<ArrayBuffer> {
  const leb = (n: number): number[] => {
    const out: number[] = [];
    do {
      let b = n & 0x7f;
      n >>>= 7;
      if (n) b |= 0x80;
      out.push(b);
    } while (n);
    return out;
  };
  const section = (id: number, content: number[]) => [id, ...leb(content.length), ...content];
  const name = (s: string) => [s.length, ...Array.from(s, (c) => c.charCodeAt(0))];
  const get = (i: number) => [0x20, i];
  const set = (i: number) => [0x21, i];
  const body: number[] = [];
  // Parameters 0 out, 1 a, 2 b, 3 bytes; local 4 end = out + bytes.
  body.push(...get(0), ...get(3), 0x6a, ...set(4));
  body.push(0x02, 0x40, 0x03, 0x40); // block, loop
  body.push(...get(0), ...get(4), 0x4f, 0x0d, 0x01); // out >= end: break
  for (const offset of [0, 16, 32, 48]) {
    body.push(...get(0));
    body.push(...get(1), 0xfd, 0x00, 0x02, offset); // v128.load a+offset
    body.push(...get(2), 0xfd, 0x00, 0x02, offset); // v128.load b+offset
    body.push(0xfd, 0xe4, 0x01); // f32x4.add
    body.push(0xfd, 0x0b, 0x02, offset); // v128.store out+offset
  }
  for (const p of [0, 1, 2]) body.push(...get(p), 0x41, 0xc0, 0x00, 0x6a, ...set(p)); // p += 64
  body.push(0x0c, 0x00, 0x0b, 0x0b, 0x0b); // br loop; end loop; end block; end func
  const func = [0x01, 0x01, 0x7f, ...body];
  return new Uint8Array([
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
    ...section(1, [0x01, 0x60, 0x04, 0x7f, 0x7f, 0x7f, 0x7f, 0x00]),
    ...section(2, [0x01, ...name('e'), ...name('m'), 0x02, 0x00, 0x01]),
    ...section(3, [0x01, 0x00]),
    ...section(7, [0x01, ...name('add'), 0x00, 0x00]),
    ...section(10, [0x01, ...leb(func.length), ...func]),
  ]);
}

type Kernel = (out: number, a: number, b: number, bytes: number) => void;

/** The part of the WebAssembly API used here (Node has it; its types come with the DOM lib, which Node-side code does not load). */
interface WasmApi {
  Module: new (bytes: Uint8Array<ArrayBuffer>) => WasmModule;
  Memory: new (size: { initial: number; maximum: number }) => { buffer: ArrayBuffer };
  Instance: new (module: WasmModule, imports: object) => { exports: Record<string, unknown> };
}
type WasmModule = { readonly wasmModule: unique symbol };
const wasm = (globalThis as unknown as { WebAssembly?: WasmApi }).WebAssembly;

let compiled: WasmModule | null | undefined;
function simdModule(): WasmModule | null {
  if (compiled === undefined) {
    try {
      compiled = wasm ? new wasm.Module(kernelBytes()) : null;
    } catch {
      compiled = null; // no wasm SIMD here: add in JavaScript
    }
  }
  return compiled;
}

/** Whether arenas add with wasm SIMD (false: JavaScript fallback). */
export function simdAvailable(): boolean {
  return simdModule() !== null;
}

const PAGE = 65536;
/** Views start at multiples of this many bytes (whole SIMD vectors and cache lines). */
const ALIGN = 64;
/**
 * Floats staged per add: this member's values are copied in and added a block at a time, so the
 * staging block stays in the L1 cache (adding a whole multi-megabyte segment at once ran at about
 * half the speed: the staged copy had left the cache by the time the add read it).
 */
const BLOCK = 8192;

const aligned = (floats: number) => Math.ceil((floats * 4) / ALIGN) * ALIGN;

export class SumArena {
  /** Scratch bytes that `take` can hand out. */
  readonly bytes: number;
  /** The caller's array that lives in this arena's memory (see collectiveArray), if any. */
  readonly home: Float32Array | null;
  /** A collective is using this home arena's scratch (set and cleared by its collective). */
  busy = false;
  private readonly buffer: ArrayBuffer;
  private readonly kernel: Kernel | null;
  private readonly stage: Float32Array;
  private readonly scratchStart: number;
  private used: number;

  /** `homeFloats`: room for a caller's array at the start of the memory, before the scratch. */
  constructor(bytes: number, useSimd = true, homeFloats = 0) {
    const module = useSimd ? simdModule() : null;
    this.scratchStart = aligned(homeFloats);
    const pages = Math.max(1, Math.ceil((this.scratchStart + bytes + aligned(BLOCK)) / PAGE));
    if (module) {
      // A fixed size, never grown: growing would detach the buffer under views being sent.
      const memory = new wasm!.Memory({ initial: pages, maximum: pages });
      this.kernel = new wasm!.Instance(module, { e: { m: memory } }).exports.add as Kernel;
      this.buffer = memory.buffer;
    } else {
      this.kernel = null;
      this.buffer = new ArrayBuffer(pages * PAGE);
    }
    const stageAt = this.buffer.byteLength - aligned(BLOCK);
    this.bytes = stageAt - this.scratchStart;
    this.stage = new Float32Array(this.buffer, stageAt, BLOCK);
    this.home = homeFloats > 0 ? new Float32Array(this.buffer, 0, homeFloats) : null;
    this.used = this.scratchStart;
  }

  /** Carve `length` floats out of the scratch (aligned); `reset` gives everything back. */
  take(length: number): Float32Array {
    const at = this.used;
    const end = at + aligned(length);
    if (end > this.scratchStart + this.bytes) throw new Error(`Sum arena of ${this.bytes} bytes cannot hold ${end - this.scratchStart} bytes.`);
    this.used = end;
    return new Float32Array(this.buffer, at, length);
  }

  reset(): void {
    this.used = this.scratchStart;
  }

  /** Whether `values` lies in this arena's memory, where the kernel can read and write it in place. */
  holds(values: Float32Array): boolean {
    return values.buffer === this.buffer;
  }

  /** Bytes an arena needs for views of these lengths (as `take` lays them out). */
  static bytesFor(lengths: number[]): number {
    return lengths.reduce((sum, n) => sum + aligned(n), 0);
  }

  /**
   * slot[i] = mine[i] + slot[i]: `slot` is a view of this arena (from `take`) holding what arrived,
   * `mine` this member's values of the same range, anywhere. With `writeBack`, the sums are also
   * copied into `mine` (while still in cache).
   */
  accumulate(slot: Float32Array, mine: Float32Array, writeBack: boolean): void {
    const n = slot.length;
    if (mine.length !== n) throw new Error(`Cannot add ${mine.length} values into ${n}.`);
    if (slot.buffer !== this.buffer) throw new Error('accumulate: the slot is not in this arena.');
    const kernel = this.kernel;
    const stage = this.stage;
    let i = 0;
    if (kernel && this.holds(mine)) {
      // The caller's array is in this memory: one kernel call over the whole range, nothing staged.
      const vectorEnd = n & ~15;
      kernel(slot.byteOffset, mine.byteOffset, slot.byteOffset, vectorEnd * 4);
      if (writeBack) mine.set(slot.subarray(0, vectorEnd));
      i = vectorEnd;
    } else if (kernel) {
      const vectorEnd = n & ~15;
      for (let block = 0; block < vectorEnd; block += BLOCK) {
        const end = Math.min(block + BLOCK, vectorEnd);
        stage.set(mine.subarray(block, end));
        const at = slot.byteOffset + block * 4;
        kernel(at, stage.byteOffset, at, (end - block) * 4);
        if (writeBack) mine.set(slot.subarray(block, end), block);
      }
      i = vectorEnd;
    }
    for (; i < n; i++) {
      slot[i] = mine[i] + slot[i];
      if (writeBack) mine[i] = slot[i];
    }
  }

  /**
   * mine[i] += slot[i] where the sum need not stay in the slot (a member's own total, last step of a
   * reduce-scatter): with `mine` in this memory the kernel writes it in place, sparing the copy back.
   */
  total(slot: Float32Array, mine: Float32Array): void {
    if (!this.kernel || !this.holds(mine)) return this.accumulate(slot, mine, true);
    const n = slot.length;
    if (mine.length !== n) throw new Error(`Cannot add ${mine.length} values into ${n}.`);
    if (!this.holds(slot)) throw new Error('total: the slot is not in this arena.');
    const vectorEnd = n & ~15;
    // Same operand order as accumulate (mine + slot): the sums are bit for bit the same either way.
    this.kernel(mine.byteOffset, mine.byteOffset, slot.byteOffset, vectorEnd * 4);
    for (let i = vectorEnd; i < n; i++) mine[i] = mine[i] + slot[i];
  }
}

/** Home arenas by the memory of the array they hold (collectiveArray). */
const homes = new WeakMap<ArrayBufferLike, SumArena>();

/**
 * A zeroed Float32Array for collectives to reduce in place — what a process allocates for buffers it
 * all-reduces again and again (gradient buckets). It lives in a WebAssembly memory of its own, beside
 * `scratchBytes` of scratch for the ring's incoming segments, so a reduction adds straight from it
 * with SIMD: no staging copy of this member's values, and the total is written in place. (NCCL and
 * Gloo gain the same from registered buffers.) Any other Float32Array works too, through the pooled
 * arenas and a staging copy.
 */
export function collectiveArray(length: number, scratchBytes: number): Float32Array {
  let arena: SumArena;
  try {
    arena = new SumArena(scratchBytes, true, length);
  } catch {
    // No room for another WebAssembly memory (each reserves address space), or over 4 GiB: a plain
    // array works the same, with a staging copy.
    return new Float32Array(length);
  }
  if (!arena.home) return new Float32Array(0);
  homes.set(arena.home.buffer, arena);
  return arena.home;
}

/**
 * The home arena of `data` (from collectiveArray) when it is free and has `bytes` of scratch; it is
 * marked busy until `releaseArena`. Otherwise null: the caller takes a pooled arena.
 */
export function homeArena(data: Float32Array, bytes: number): SumArena | null {
  const arena = homes.get(data.buffer);
  if (!arena || arena.busy || arena.bytes < bytes) return null;
  arena.busy = true;
  arena.reset();
  return arena;
}

/** Idle arenas, reused by the next collective (allocating and first touching memory costs more than the copy it saves). */
const idle: SumArena[] = [];
const MAX_IDLE = 2;

/** An arena of at least `bytes` for one collective; give it back with `releaseArena` when its sends have left. */
export function acquireArena(bytes: number): SumArena {
  let best = -1;
  for (let i = 0; i < idle.length; i++) {
    if (idle[i].bytes >= bytes && (best < 0 || idle[i].bytes < idle[best].bytes)) best = i;
  }
  const arena = best >= 0 ? idle.splice(best, 1)[0] : new SumArena(bytes);
  arena.reset();
  return arena;
}

export function releaseArena(arena: SumArena): void {
  if (arena.home) {
    arena.busy = false;
    return;
  }
  idle.push(arena);
  if (idle.length > MAX_IDLE) {
    idle.sort((x, y) => y.bytes - x.bytes);
    idle.pop();
  }
}
