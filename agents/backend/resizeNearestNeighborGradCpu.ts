import { getKernel, registerKernel, unregisterKernel, util, type KernelConfig, type KernelFunc, type TensorInfo } from '@tensorflow/tfjs-core';

/**
 * The gradient of nearest-neighbour resizing (UpSampling2D's, tf.image.resizeNearestNeighbor's) on the
 * cpu backend. tfjs-backend-cpu 4.22's kernel reads `dy` at the input's batch stride, so for a batch
 * of more than one image it adds other images' gradients in (max error 5.9 on a 2×2×2×1 input; the
 * wasm kernel is right). This one is the exact adjoint of the cpu forward kernel: every output pixel
 * hands its gradient to the input pixel the forward pass copied it from, with the same index rule
 * (align corners, half-pixel centres).
 */
interface CpuBackend {
  data: { get(id: unknown): { values: ArrayLike<number> } };
  makeTensorInfo(shape: number[], dtype: 'float32', values: Float32Array): TensorInfo;
}

/** The forward kernel's source index along one axis for output index `i`. */
function sourceIndex(i: number, ratio: number, size: number, alignCorners: boolean, halfPixelCenters: boolean): number {
  const frac = halfPixelCenters ? ratio * (i + 0.5) : ratio * i;
  const nearest = Math.min(size - 1, alignCorners ? Math.round(frac) : Math.floor(frac));
  return halfPixelCenters ? Math.max(0, nearest) : nearest;
}

const resizeNearestNeighborGrad: KernelFunc = ({ inputs, backend, attrs }) => {
  const { images, dy } = inputs as { images: TensorInfo; dy: TensorInfo };
  const { alignCorners, halfPixelCenters } = attrs as unknown as { alignCorners: boolean; halfPixelCenters: boolean };
  const cpu = backend as unknown as CpuBackend;
  const [batch, inHeight, inWidth, channels] = images.shape;
  const [, outHeight, outWidth] = dy.shape;
  const dyValues = cpu.data.get(dy.dataId).values;
  const dx = new Float32Array(util.sizeFromShape(images.shape));
  const ratio = (inSize: number, outSize: number) => (alignCorners && outSize > 1 ? (inSize - 1) / (outSize - 1) : inSize / outSize);
  const rowRatio = ratio(inHeight, outHeight);
  const colRatio = ratio(inWidth, outWidth);
  const sourceCols = Array.from({ length: outWidth }, (_, c) => sourceIndex(c, colRatio, inWidth, alignCorners, halfPixelCenters));
  let at = 0;
  for (let b = 0; b < batch; b++) {
    for (let r = 0; r < outHeight; r++) {
      const row = (b * inHeight + sourceIndex(r, rowRatio, inHeight, alignCorners, halfPixelCenters)) * inWidth;
      for (let c = 0; c < outWidth; c++) {
        const base = (row + sourceCols[c]) * channels;
        for (let d = 0; d < channels; d++) dx[base + d] += dyValues[at++];
      }
    }
  }
  return cpu.makeTensorInfo(images.shape, 'float32', dx);
};

export const resizeNearestNeighborGradCpuConfig: KernelConfig = { kernelName: 'ResizeNearestNeighborGrad', backendName: 'cpu', kernelFunc: resizeNearestNeighborGrad };

/** Put the exact kernel in place of tfjs's on the cpu backend (idempotent). */
export function registerCpuKernelFixes(): void {
  const current = getKernel('ResizeNearestNeighborGrad', 'cpu');
  if (current?.kernelFunc === resizeNearestNeighborGrad) return;
  if (current) unregisterKernel('ResizeNearestNeighborGrad', 'cpu');
  registerKernel(resizeNearestNeighborGradCpuConfig);
}
