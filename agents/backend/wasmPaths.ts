import { existsSync } from 'node:fs';
import { join } from 'node:path';

/** The binaries tfjs-backend-wasm 4.22 may fetch (plain, SIMD, threaded SIMD). */
export const WASM_BINARIES = ['tfjs-backend-wasm.wasm', 'tfjs-backend-wasm-simd.wasm', 'tfjs-backend-wasm-threaded-simd.wasm'];

/**
 * The folder holding the wasm binaries when this code runs from the esbuild agent bundle
 * (dist/agent/shoal-agent.cjs, with the .wasm files copied beside it by scripts/build.mjs), else null.
 *
 * From TS source (tsx, vitest) the backend finds its binaries in node_modules by itself; in the bundle
 * its own module location is gone, so the bundle's folder must be given explicitly. `__dirname` is
 * only defined in CJS (the bundle) and in vitest's transform, where it is the source folder, which has
 * no .wasm files, so the check below is what tells the two apart.
 */
export function bundledWasmDir(): string | null {
  const dir = typeof __dirname === 'string' ? __dirname : null;
  if (!dir) return null;
  return WASM_BINARIES.some((f) => existsSync(join(dir, f))) ? dir : null;
}
