import * as tf from '@tensorflow/tfjs-core';
import { registerCpuKernelFixes } from './resizeNearestNeighborGradCpu.js';
// A named import, not a bare one: the package's "sideEffects" list omits its Node entry file, so
// esbuild drops a bare `import '@tensorflow/tfjs-backend-cpu'` from the agent bundle and the cpu
// backend silently never registers there. Using an export keeps the module (and its registration).
import { version_cpu } from '@tensorflow/tfjs-backend-cpu';
import { setWasmPaths } from '@tensorflow/tfjs-backend-wasm';
import { bundledWasmDir } from './wasmPaths.js';
import { registerWasmGradientKernels } from './wasmKernels.js';

export type BackendName = 'tensorflow-gpu' | 'tensorflow' | 'wasm' | 'cpu';

export interface SelectedBackend {
  name: BackendName;
  /** The npm package that provides the backend. */
  package: string;
  /** One line: what was chosen, plus why each better candidate was skipped. */
  detail: string;
}

export interface SelectBackendOptions {
  /** Candidate order to try instead of the default (fastest first). SHOAL_BACKEND still wins. */
  prefer?: string[];
  log?: (msg: string) => void;
}

interface Candidate {
  name: BackendName;
  package: string;
  /** Makes the backend current; throws a short reason when it cannot. Returns a note for `detail`. */
  activate(): Promise<Activated>;
}

interface Activated {
  note: string;
  /** Set when the backend came from another package than the candidate's (see activateNative). */
  package?: string;
}

const DEFAULT_ORDER: BackendName[] = ['tensorflow-gpu', 'tensorflow', 'wasm', 'cpu'];

/** Values SHOAL_BACKEND accepts, and the candidates each one allows. */
const FORCED: Record<string, BackendName[]> = {
  'tensorflow-gpu': ['tensorflow-gpu'],
  tensorflow: ['tensorflow-gpu', 'tensorflow'],
  wasm: ['wasm'],
  cpu: ['cpu'],
};

/**
 * Pick the fastest TensorFlow.js backend that loads on this host and passes a tiny smoke op:
 * tfjs-node-gpu (native TensorFlow on a GPU), tfjs-node (native TensorFlow on CPU), wasm, cpu.
 * The native packages are optional: they are installed on hosts at deploy time, never bundled, and
 * resolved here at run time, so their absence is an ordinary "skipped" reason, not an error.
 *
 * SHOAL_BACKEND=wasm|cpu|tensorflow|tensorflow-gpu forces a choice; if that one cannot load this throws
 * with the reason instead of silently falling back to something slower.
 */
export async function selectBackend(opts: SelectBackendOptions = {}): Promise<SelectedBackend> {
  const log = opts.log ?? (() => {});
  const forced = process.env.SHOAL_BACKEND?.trim();
  let order: BackendName[];
  if (forced) {
    const allowed = FORCED[forced];
    if (!allowed) {
      throw new Error(`SHOAL_BACKEND="${forced}" is not a backend Shoal knows. Use one of: ${Object.keys(FORCED).join(', ')}.`);
    }
    order = allowed;
  } else {
    order = (opts.prefer ?? DEFAULT_ORDER).map((name) => {
      if (!DEFAULT_ORDER.includes(name as BackendName)) {
        throw new Error(`Unknown backend "${name}" in prefer. Use some of: ${DEFAULT_ORDER.join(', ')}.`);
      }
      return name as BackendName;
    });
  }

  const skipped: string[] = [];
  for (const candidate of order.map(candidateFor)) {
    try {
      const { note, package: pkg = candidate.package } = await candidate.activate();
      smokeTest();
      const detail = [`using ${candidate.name} (${pkg})${note ? `: ${note}` : ''}`, ...skipped].join('; ');
      log(`backend: ${detail}`);
      return { name: candidate.name, package: pkg, detail };
    } catch (err) {
      const reason = `${candidate.name} skipped: ${shortReason(err, candidate.package)}`;
      log(`backend: ${reason}`);
      skipped.push(reason);
    }
  }
  const why = skipped.join('; ');
  const pinned = process.env.CUDA_VISIBLE_DEVICES?.trim();
  if (forced === 'tensorflow-gpu' && pinned) {
    throw new Error(
      `this agent is pinned to GPU ${pinned} (CUDA_VISIBLE_DEVICES) but tfjs-node-gpu cannot run it (${why}). ` +
        `Install @tensorflow/tfjs-node-gpu@4.22.0 beside the agent (shoal deploy does on SSH hosts) with CUDA 11.2 and cuDNN 8.1, or deploy with --allow-cpu-fallback to train on the CPU.`,
    );
  }
  if (forced) {
    throw new Error(
      `SHOAL_BACKEND=${forced} was requested but it cannot load on this host (${why}). ` +
        `Install the package it needs or unset SHOAL_BACKEND to pick the best available backend.`,
    );
  }
  throw new Error(`No TensorFlow.js backend could be loaded (${why}).`);
}

function candidateFor(name: BackendName): Candidate {
  switch (name) {
    case 'tensorflow-gpu':
      return { name, package: '@tensorflow/tfjs-node-gpu', activate: () => activateNative('@tensorflow/tfjs-node-gpu', true) };
    case 'tensorflow':
      return { name, package: '@tensorflow/tfjs-node', activate: () => activateNative('@tensorflow/tfjs-node', false) };
    case 'wasm':
      return { name, package: '@tensorflow/tfjs-backend-wasm', activate: activateWasm };
    case 'cpu':
      return { name, package: '@tensorflow/tfjs-backend-cpu', activate: activateCpu };
  }
}

/** Which package registered the 'tensorflow' backend in this process (both native packages use that name). */
let nativeLoadedFrom: string | null = null;

/**
 * tfjs-node and tfjs-node-gpu both register a backend named 'tensorflow' and cannot both load. If the
 * GPU package loaded but found no GPU, the CPU candidate reuses it (it runs TensorFlow on CPU just as
 * tfjs-node would) and reports that package.
 */
async function activateNative(pkg: string, wantGpu: boolean): Promise<Activated> {
  if (!tf.findBackendFactory('tensorflow')) {
    // A variable specifier keeps TypeScript and the bundler from resolving the optional package at
    // build time; at run time Node resolves it from the host's node_modules.
    const spec: string = pkg;
    await import(/* @vite-ignore */ spec);
    nativeLoadedFrom = pkg;
  }
  if (!(await tf.setBackend('tensorflow'))) throw new Error(`${pkg} loaded but its 'tensorflow' backend did not initialise`);
  const native = tf.backend() as { isGPUPackage?: boolean; isUsingGpuDevice?: boolean };
  if (wantGpu) {
    if (!native.isGPUPackage) throw new Error(`the 'tensorflow' backend loaded from ${nativeLoadedFrom ?? 'elsewhere'} is the CPU package`);
    if (!native.isUsingGpuDevice) throw new Error(`${pkg} loaded but TensorFlow found no usable GPU (CUDA/cuDNN missing?)`);
    return { note: 'TensorFlow on GPU' };
  }
  const from = nativeLoadedFrom ?? pkg;
  return { note: 'native TensorFlow on CPU', package: from };
}

async function activateWasm(): Promise<Activated> {
  const dir = bundledWasmDir();
  // In the bundle, point the backend at the .wasm files copied beside it (trailing slash: a prefix).
  if (dir) setWasmPaths(`${dir}/`);
  const warning = await captureWarnings(() => tf.setBackend('wasm'));
  if (!warning.ok) throw new Error(`wasm backend did not initialise${warning.text ? `: ${warning.text}` : ''}`);
  const filled = registerWasmGradientKernels();
  const notes = [dir ? `binaries from ${dir}` : '', filled.length ? `filled kernels ${filled.join(', ')}` : ''];
  return { note: notes.filter(Boolean).join(', ') };
}

async function activateCpu(): Promise<Activated> {
  if (!(await tf.setBackend('cpu'))) throw new Error('cpu backend did not initialise');
  registerCpuKernelFixes();
  // The cpu backend prints a "looks like you are running TensorFlow.js in Node.js" banner on its first
  // write. Shoal already chose it knowingly (and said why in `detail`), so the banner is only noise.
  const cpu = tf.findBackend('cpu') as { firstUse?: boolean } | null;
  if (cpu && 'firstUse' in cpu) cpu.firstUse = false;
  return { note: `pure-JS kernels ${version_cpu} (slowest)` };
}

/** tfjs reports a failed backend init with console.warn and a `false` result; keep the text for `detail`. */
async function captureWarnings(fn: () => Promise<boolean>): Promise<{ ok: boolean; text: string }> {
  const original = console.warn;
  const seen: string[] = [];
  console.warn = (...args: unknown[]) => void seen.push(args.map(String).join(' '));
  try {
    const ok = await fn();
    return { ok, text: seen.map(firstLine).join(' | ') };
  } finally {
    console.warn = original;
  }
}

/** A 2×2 product with a known answer: catches a backend that loads but computes nonsense. */
function smokeTest(): void {
  const got = tf.tidy(() => tf.matMul(tf.tensor2d([1, 2, 3, 4], [2, 2]), tf.tensor2d([5, 6, 7, 8], [2, 2])).dataSync());
  const want = [19, 22, 43, 50];
  if (!want.every((v, i) => Math.abs(got[i] - v) < 1e-4)) {
    throw new Error(`smoke test failed: 2×2 matMul gave [${Array.from(got).join(', ')}], expected [${want.join(', ')}]`);
  }
}

function firstLine(text: string): string {
  const line = text.split('\n').find((l) => l.trim()) ?? '';
  return line.length > 160 ? `${line.slice(0, 157)}...` : line;
}

/**
 * A reason short enough for one log line: "not installed" when the package itself is absent (Node's
 * and vitest's wordings); anything else, e.g. a present package whose native addon fails, verbatim.
 */
function shortReason(err: unknown, pkg: string): string {
  const message = (err as { message?: string })?.message ?? String(err);
  const quoted = new RegExp(`Cannot find (module|package) ['"]${pkg.replace(/[/.-]/g, '\\$&')}['"]|Failed to load url ${pkg}\\b`);
  return quoted.test(message) ? `${pkg} not installed` : firstLine(message);
}
