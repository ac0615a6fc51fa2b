import type { LayerNode, LayerSpec, RecurrentSpec } from '../../../engine/model/graph';

/** One weight tensor of a layer, named as Keras names it. */
export interface Weight {
  name: string;
  shape: number[];
  trainable: boolean;
}

const product = (shape: number[]) => shape.reduce((a, b) => a * b, 1);
const axis = (shape: number[], a: number) => shape[a < 0 ? shape.length + a : a] ?? 1;

function recurrent(spec: RecurrentSpec, features: number, prefix = ''): Weight[] {
  const gates = spec.cell === 'lstm' ? 4 : spec.cell === 'gru' ? 3 : 1;
  const u = spec.units;
  const bias: number[] = spec.cell === 'gru' && spec.resetAfter ? [2, gates * u] : [gates * u];
  return [
    { name: `${prefix}kernel`, shape: [features, gates * u], trainable: true },
    { name: `${prefix}recurrent_kernel`, shape: [u, gates * u], trainable: true },
    ...(spec.useBias ? [{ name: `${prefix}bias`, shape: bias, trainable: true }] : []),
  ];
}

/** The weights a layer of this spec holds, given its input shapes (batch excluded). */
function weightsOf(spec: LayerSpec, inputs: number[][]): Weight[] {
  const input = inputs[0] ?? [];
  const last = input[input.length - 1] ?? 1;
  const w = (name: string, shape: number[], trainable = true): Weight => ({ name, shape, trainable });
  switch (spec.kind) {
    case 'dense':
      return [w('kernel', [last, spec.units]), w('bias', [spec.units])];
    case 'denseNd':
      return [...(spec.tiedTo ? [] : [w('kernel', [last, spec.units])]), ...(spec.useBias ? [w('bias', [spec.units])] : [])];
    case 'conv2d':
      return [w('kernel', [...spec.kernelSize, last, spec.filters]), w('bias', [spec.filters])];
    case 'conv':
      return [w('kernel', [...spec.kernelSize, last, spec.filters]), ...(spec.useBias ? [w('bias', [spec.filters])] : [])];
    case 'conv2dTranspose':
      return [w('kernel', [...spec.kernelSize, spec.filters, last]), ...(spec.useBias ? [w('bias', [spec.filters])] : [])];
    case 'depthwiseConv2d':
      return [w('depthwise_kernel', [...spec.kernelSize, last, spec.depthMultiplier]), ...(spec.useBias ? [w('bias', [last * spec.depthMultiplier])] : [])];
    case 'separableConv2d':
      return [
        w('depthwise_kernel', [...spec.kernelSize, last, spec.depthMultiplier]),
        w('pointwise_kernel', [1, 1, last * spec.depthMultiplier, spec.filters]),
        ...(spec.useBias ? [w('bias', [spec.filters])] : []),
      ];
    case 'batchNorm': {
      const c = axis(input, spec.axis);
      return [...(spec.scale ? [w('gamma', [c])] : []), ...(spec.center ? [w('beta', [c])] : []), w('moving_mean', [c], false), w('moving_variance', [c], false)];
    }
    case 'layerNorm': {
      const shape = spec.axes.map((a) => axis(input, a));
      return [...(spec.scale ? [w('gamma', shape)] : []), ...(spec.center ? [w('beta', shape)] : [])];
    }
    case 'embedding':
      return [w('embeddings', [spec.inputDim, spec.outputDim])];
    case 'positionEmbedding':
      return [w('embeddings', [spec.maxLength, last])];
    case 'recurrent':
      return recurrent(spec, last);
    case 'bidirectional':
      return [...recurrent(spec.layer, last, 'forward/'), ...recurrent(spec.layer, last, 'backward/')];
    case 'timeDistributed':
      return weightsOf(spec.layer, inputs.map((shape) => shape.slice(1)));
    case 'multiHeadAttention': {
      const [q, v] = [inputs[0] ?? [], inputs[1] ?? inputs[0] ?? []];
      const k = inputs[2] ?? v;
      const [dq, dv, dk] = [q[q.length - 1] ?? 1, v[v.length - 1] ?? 1, k[k.length - 1] ?? 1];
      const out = spec.outputDim ?? dq;
      const h = spec.numHeads;
      const bias = (name: string, shape: number[]) => (spec.useBias ? [w(name, shape)] : []);
      return [
        w('query/kernel', [dq, h, spec.keyDim]),
        ...bias('query/bias', [h, spec.keyDim]),
        w('key/kernel', [dk, h, spec.keyDim]),
        ...bias('key/bias', [h, spec.keyDim]),
        w('value/kernel', [dv, h, spec.valueDim]),
        ...bias('value/bias', [h, spec.valueDim]),
        w('attention_output/kernel', [h, spec.valueDim, out]),
        ...bias('attention_output/bias', [out]),
      ];
    }
    default:
      return [];
  }
}

/**
 * A layer's weights with their shapes, when they account for every parameter the model counts for it;
 * undefined when they do not (a layer whose weights Shoal does not spell out): the inspector then shows
 * the counts only, never shapes that might be wrong.
 */
export function layerWeights(layer: LayerNode, inputShapes: number[][]): Weight[] | undefined {
  const weights = weightsOf(layer.spec, inputShapes);
  const trainable = weights.filter((w) => w.trainable).reduce((sum, w) => sum + product(w.shape), 0);
  const frozen = weights.filter((w) => !w.trainable).reduce((sum, w) => sum + product(w.shape), 0);
  if (trainable + frozen !== layer.params + layer.nonTrainableParams) return undefined;
  // A frozen layer's weights are all non-trainable: the counts say which.
  if (layer.params === 0 && frozen === 0) return weights.map((w) => ({ ...w, trainable: false }));
  return trainable === layer.params ? weights : undefined;
}

export const weightSize = product;
