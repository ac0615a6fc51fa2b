import {
  backend_util,
  Conv2DBackpropFilter,
  getKernel,
  type Conv2DBackpropFilterAttrs,
  type KernelConfig,
  type KernelFunc,
  type NamedAttrMap,
  type NamedTensorInfoMap,
  type TensorInfo,
} from '@tensorflow/tfjs-core';

/**
 * `Conv2DBackpropFilter` for the wasm backend, which ships without it (tfjs 4.22), so any conv2d
 * training on wasm failed in backward. Rather than copying tensors to the JS cpu kernel, it is composed
 * from wasm kernels, one matrix product per filter tap:
 *
 *   dW[i, j, :, :] = patch(i, j)ᵀ · dy      with patch(i, j) = xPadded[:, i : i+(outH−1)·sh+1 : sh,
 *                                                                          j : j+(outW−1)·sw+1 : sw, :]
 *
 * reshaped to [N = batch·outH·outW, C] and dy to [N, O]. The kh·kw products [C, O] are concatenated
 * along axis 0, which is exactly the [kh, kw, C, O] filter layout. The FLOPs equal a forward conv; the
 * extra memory is one strided copy of x per tap, freed right after its product.
 *
 * Kernels are called directly (not through tf ops) because this runs inside the engine's own kernel
 * dispatch: intermediates are plain backend TensorInfos, released with `backend.disposeData`.
 * NHWC only, dilations 1 (tfjs's conv2d gradient itself refuses dilations > 1).
 */

type Backend = { disposeData(dataId: object, force?: boolean): boolean };

function run(name: string, backend: Backend, inputs: NamedTensorInfoMap, attrs: NamedAttrMap): TensorInfo {
  const kernel = getKernel(name, 'wasm');
  if (!kernel) throw new Error(`Conv2DBackpropFilter (wasm): the wasm backend has no "${name}" kernel to build on.`);
  const out = kernel.kernelFunc({ inputs, backend, attrs });
  return Array.isArray(out) ? out[0] : out;
}

export const conv2dBackpropFilterWasm: KernelFunc = ({ inputs, backend: rawBackend, attrs }) => {
  const backend = rawBackend as Backend;
  const { x, dy } = inputs as { x: TensorInfo; dy: TensorInfo };
  const { strides, pad, dataFormat, dimRoundingMode, filterShape } = attrs as unknown as Conv2DBackpropFilterAttrs;
  if (dataFormat === 'NCHW') {
    throw new Error('Conv2DBackpropFilter (wasm): only NHWC is supported; Shoal layers are channels-last.');
  }
  const info = backend_util.computeConv2DInfo(
    x.shape as [number, number, number, number],
    filterShape,
    strides,
    1,
    pad,
    dimRoundingMode,
    false,
    'channelsLast',
  );
  const { batchSize, inChannels, outChannels, outHeight, outWidth, strideHeight, strideWidth } = info;
  const { filterHeight, filterWidth, padInfo } = info;
  const rows = batchSize * outHeight * outWidth;

  const temps: TensorInfo[] = [];
  const keep = (t: TensorInfo): TensorInfo => (temps.push(t), t);
  try {
    const padded =
      padInfo.top || padInfo.bottom || padInfo.left || padInfo.right
        ? keep(
            run('PadV2', backend, { x }, {
              paddings: [[0, 0], [padInfo.top, padInfo.bottom], [padInfo.left, padInfo.right], [0, 0]],
              constantValue: 0,
            }),
          )
        : x;
    const dy2d = keep(run('Reshape', backend, { x: dy }, { shape: [rows, outChannels] }));
    const taps: TensorInfo[] = [];
    for (let i = 0; i < filterHeight; i++) {
      for (let j = 0; j < filterWidth; j++) {
        const patch = run('StridedSlice', backend, { x: padded }, {
          begin: [0, i, j, 0],
          end: [batchSize, i + (outHeight - 1) * strideHeight + 1, j + (outWidth - 1) * strideWidth + 1, inChannels],
          strides: [1, strideHeight, strideWidth, 1],
          beginMask: 0,
          endMask: 0,
          ellipsisMask: 0,
          newAxisMask: 0,
          shrinkAxisMask: 0,
        });
        const patch2d = run('Reshape', backend, { x: patch }, { shape: [rows, inChannels] });
        backend.disposeData(patch.dataId);
        taps.push(keep(run('BatchMatMul', backend, { a: patch2d, b: dy2d }, { transposeA: true, transposeB: false })));
        backend.disposeData(patch2d.dataId);
      }
    }
    if (taps.length === 1) return run('Reshape', backend, { x: taps[0] }, { shape: filterShape });
    const stacked = keep(run('Concat', backend, taps as unknown as NamedTensorInfoMap, { axis: 0 }));
    return run('Reshape', backend, { x: stacked }, { shape: filterShape });
  } finally {
    for (const t of temps) backend.disposeData(t.dataId);
  }
};

export const conv2dBackpropFilterWasmConfig: KernelConfig = {
  kernelName: Conv2DBackpropFilter,
  backendName: 'wasm',
  kernelFunc: conv2dBackpropFilterWasm,
};
