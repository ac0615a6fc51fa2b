import type { LayerSpec } from '../layerSpec.js';
import { facts, inputOfRank, product, windowOutputSizes, type LayerFacts } from './common.js';

type ConvSpec = Extract<LayerSpec, { kind: 'conv2d' | 'conv' | 'depthwiseConv2d' | 'separableConv2d' | 'conv2dTranspose' }>;

const IMAGE = '[height, width, channels]';

/** Convolutions, channels last. FLOPs are 2 per multiply-add of the kernel over every output position. */
export function convFacts(spec: ConvSpec, inputs: number[][]): LayerFacts {
  switch (spec.kind) {
    case 'conv2d': {
      const [h, w, c] = inputOfRank('conv2d', inputs, 3, IMAGE);
      const [oh, ow] = windowOutputSizes('conv2d kernel', [h, w], spec.kernelSize, spec.strides, spec.padding);
      const [kh, kw] = spec.kernelSize;
      return facts([oh, ow, spec.filters], kh * kw * c * spec.filters + spec.filters, 2 * oh * ow * spec.filters * kh * kw * c);
    }
    case 'conv': {
      const input = inputOfRank(`conv${spec.rank}d`, inputs, spec.rank + 1, spec.rank === 1 ? '[steps, channels]' : IMAGE);
      const c = input[spec.rank];
      const out = windowOutputSizes(`conv${spec.rank}d kernel`, input.slice(0, spec.rank), spec.kernelSize, spec.strides, spec.padding, spec.dilation);
      const window = product(spec.kernelSize) * c;
      return facts([...out, spec.filters], window * spec.filters + (spec.useBias ? spec.filters : 0), 2 * product(out) * spec.filters * window);
    }
    case 'depthwiseConv2d': {
      const [h, w, c] = inputOfRank('depthwiseConv2d', inputs, 3, IMAGE);
      const out = windowOutputSizes('depthwiseConv2d kernel', [h, w], spec.kernelSize, spec.strides, spec.padding, spec.dilation);
      const channels = c * spec.depthMultiplier;
      const k = product(spec.kernelSize);
      return facts([...out, channels], k * channels + (spec.useBias ? channels : 0), 2 * product(out) * channels * k);
    }
    case 'separableConv2d': {
      const [h, w, c] = inputOfRank('separableConv2d', inputs, 3, IMAGE);
      const out = windowOutputSizes('separableConv2d kernel', [h, w], spec.kernelSize, spec.strides, spec.padding, spec.dilation);
      const mid = c * spec.depthMultiplier;
      const k = product(spec.kernelSize);
      const params = k * mid + mid * spec.filters + (spec.useBias ? spec.filters : 0);
      return facts([...out, spec.filters], params, 2 * product(out) * (mid * k + mid * spec.filters));
    }
    case 'conv2dTranspose': {
      const [h, w, c] = inputOfRank('conv2dTranspose', inputs, 3, IMAGE);
      // Keras's deconv_output_length without output padding.
      const grow = (n: number, k: number, s: number) => (spec.padding === 'same' ? n * s : n * s + Math.max(k - s, 0));
      const [kh, kw] = spec.kernelSize;
      const out = [grow(h, kh, spec.strides[0]), grow(w, kw, spec.strides[1]), spec.filters];
      // Every input position scatters a full kernel into the output.
      return facts(out, kh * kw * c * spec.filters + (spec.useBias ? spec.filters : 0), 2 * h * w * c * spec.filters * kh * kw);
    }
  }
}
