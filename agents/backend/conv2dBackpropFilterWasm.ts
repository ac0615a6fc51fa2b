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
 * training on wasm failed in backward. Rather than copying tensors to the JS cpu kernel, it is one wasm
 * (XNNPACK) convolution, the way TensorFlow itself derives the filter gradient:
 *
 *   dW[i, j, c, o] = Σ_{b, y, x} xPadded[b, y·sh + i, x·sw + j, c] · dy[b, y, x, o]
 *
 * is a convolution of x, seen as a batch of C one-image planes with B channels ([C, H, W, B]), with dy
 * as the filter ([outH, outW, B, O]), the forward strides becoming dilations and the forward padding
 * kept: the result is [C, kh, kw, O] (cropped if the padded input leaves extra rows), transposed to the
 * [kh, kw, C, O] filter layout. At the zoo cnn's shapes (batch 64) it takes ≈3 ms per layer, against
 * 440–1600 ms for the cpu kernel and 19–27 ms for one strided slice + matMul per filter tap (our first
 * version): XNNPACK does the im2col internally.
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
  const { inChannels, outChannels, filterHeight, filterWidth, strideHeight, strideWidth, padInfo } = info;

  const temps: TensorInfo[] = [];
  const keep = (t: TensorInfo): TensorInfo => (temps.push(t), t);
  try {
    const planes = keep(run('Transpose', backend, { x }, { perm: [3, 1, 2, 0] })); // [C, H, W, B]
    const dyFilter = keep(run('Transpose', backend, { x: dy }, { perm: [1, 2, 0, 3] })); // [outH, outW, B, O]
    const full = keep(
      run('Conv2D', backend, { x: planes, filter: dyFilter }, {
        strides: [1, 1],
        pad: [[0, 0], [padInfo.top, padInfo.bottom], [padInfo.left, padInfo.right], [0, 0]],
        dataFormat: 'NHWC',
        dilations: [strideHeight, strideWidth],
      }),
    ); // [C, ≥kh, ≥kw, O]
    const [, fullH, fullW] = full.shape;
    const cropped =
      fullH === filterHeight && fullW === filterWidth
        ? full
        : keep(run('Slice', backend, { x: full }, { begin: [0, 0, 0, 0], size: [inChannels, filterHeight, filterWidth, outChannels] }));
    return run('Transpose', backend, { x: cropped }, { perm: [1, 2, 0, 3] }); // [kh, kw, C, O]
  } finally {
    for (const t of temps) backend.disposeData(t.dataId);
  }
};

export const conv2dBackpropFilterWasmConfig: KernelConfig = {
  kernelName: Conv2DBackpropFilter,
  backendName: 'wasm',
  kernelFunc: conv2dBackpropFilterWasm,
};
