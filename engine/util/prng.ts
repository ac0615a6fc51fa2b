/**
 * Deterministic pseudo-random numbers. Every random choice Shoal makes (initial weights, data order,
 * the train/test split) comes from here, so that any process on any host reproduces it from a seed.
 */

/** 32-bit FNV-1a hash of a string; used to derive independent seeds from names. */
export function hashString(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** Mix several integers into one 32-bit seed. */
export function mixSeeds(...parts: Array<number | string>): number {
  return hashString(parts.map(String).join('/'));
}

/** mulberry32: small, fast, good enough for shuffles and initialisation. Returns floats in [0, 1). */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Fisher–Yates permutation of 0..n-1 driven by a seed. */
export function seededPermutation(n: number, seed: number): Uint32Array {
  const rand = mulberry32(seed);
  const out = new Uint32Array(n);
  for (let i = 0; i < n; i++) out[i] = i;
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    const t = out[i];
    out[i] = out[j];
    out[j] = t;
  }
  return out;
}
