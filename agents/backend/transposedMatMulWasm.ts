import {
  BatchMatMul,
  getKernel,
  registerKernel,
  unregisterKernel,
  type BatchMatMulAttrs,
  type KernelConfig,
  type KernelFunc,
  type TensorInfo,
} from '@tensorflow/tfjs-core';

/**
 * A faster path for wasm's BatchMatMul when an operand is transposed, the case every dense layer's
 * backward hits (dx = dy·Wᵀ, dW = xᵀ·dy). tfjs 4.22's wasm kernel handles transposeA/transposeB with a
 * slow generic loop: at the mlp's shapes (batch 64, 784×512) it takes 22–25 ms, against 1.3 ms to
 * transpose the operand explicitly plus 1.5–2.5 ms for the plain product (XNNPACK). This wrapper does
 * exactly that, then calls the original kernel with both flags false; untransposed calls go straight
 * through. Same arithmetic (each output is the same dot product), a different summation order only.
 */

const WRAPPED = Symbol('shoal.transposedMatMul');

type Backend = { disposeData(dataId: object, force?: boolean): boolean };

function swapLastTwo(rank: number): number[] {
  const perm = Array.from({ length: rank }, (_, i) => i);
  [perm[rank - 2], perm[rank - 1]] = [perm[rank - 1], perm[rank - 2]];
  return perm;
}

function makeWrapper(original: KernelConfig): KernelConfig {
  const transpose = getKernel('Transpose', 'wasm');
  if (!transpose) throw new Error('wasm backend has no Transpose kernel; cannot speed up transposed matMul.');
  const kernelFunc: KernelFunc = (args) => {
    const { transposeA, transposeB } = args.attrs as unknown as BatchMatMulAttrs;
    if (!transposeA && !transposeB) return original.kernelFunc(args);
    const backend = args.backend as Backend;
    const { a, b } = args.inputs as { a: TensorInfo; b: TensorInfo };
    const explicit = (t: TensorInfo) => transpose.kernelFunc({ inputs: { x: t }, backend, attrs: { perm: swapLastTwo(t.shape.length) } }) as TensorInfo;
    const a2 = transposeA ? explicit(a) : a;
    const b2 = transposeB ? explicit(b) : b;
    try {
      return original.kernelFunc({ ...args, inputs: { a: a2, b: b2 }, attrs: { ...args.attrs, transposeA: false, transposeB: false } });
    } finally {
      if (a2 !== a) backend.disposeData(a2.dataId);
      if (b2 !== b) backend.disposeData(b2.dataId);
    }
  };
  (kernelFunc as unknown as Record<symbol, boolean>)[WRAPPED] = true;
  // Keep the original setup (it binds the wasm function) in case the backend initialises after this.
  return { ...original, kernelFunc };
}

/** The stock kernel while the wrapper is installed (to restore it). */
let stock: KernelConfig | null = null;

/** Replace wasm's BatchMatMul by the wrapper; idempotent. Returns true if it installed it now. */
export function installTransposedMatMulWasm(): boolean {
  const current = getKernel(BatchMatMul, 'wasm');
  if (!current) throw new Error('wasm backend has no BatchMatMul kernel (is @tensorflow/tfjs-backend-wasm imported?).');
  if ((current.kernelFunc as unknown as Record<symbol, boolean>)[WRAPPED]) return false;
  const wrapper = makeWrapper(current);
  unregisterKernel(BatchMatMul, 'wasm');
  registerKernel(wrapper);
  stock = current;
  return true;
}

/** Put tfjs's own BatchMatMul back (the backend benchmark measures both). Returns true if it did. */
export function uninstallTransposedMatMulWasm(): boolean {
  if (!stock) return false;
  unregisterKernel(BatchMatMul, 'wasm');
  registerKernel(stock);
  stock = null;
  return true;
}
