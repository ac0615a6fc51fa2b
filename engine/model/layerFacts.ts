import type { LayerSpec } from './layerSpec.js';
import { attentionFacts } from './facts/attention.js';
import { facts, type LayerFacts } from './facts/common.js';
import { convFacts } from './facts/conv.js';
import { denseFacts, embeddingFacts } from './facts/dense.js';
import { concatenateFacts, mergeFacts } from './facts/merge.js';
import { normFacts } from './facts/norm.js';
import { poolingFacts } from './facts/pooling.js';
import { bidirectionalFacts, recurrentFacts, timeDistributedFacts } from './facts/recurrent.js';
import { shapeFacts } from './facts/shape.js';
import { tfjsLayerFacts } from './facts/tfjsLayer.js';

export type { LayerFacts } from './facts/common.js';

/**
 * Shape and cost facts of one layer from its spec and the shapes of its inputs (batch excluded), in
 * the order the layer takes them. Throws an Error that says what does not fit.
 */
export function layerFacts(spec: LayerSpec, inputs: number[][]): LayerFacts {
  switch (spec.kind) {
    case 'input':
      return facts([...spec.shape], 0, 0);
    case 'dense':
    case 'denseNd':
      return denseFacts(spec, inputs);
    case 'embedding':
    case 'positionEmbedding':
      return embeddingFacts(spec, inputs);
    case 'conv2d':
    case 'conv':
    case 'depthwiseConv2d':
    case 'separableConv2d':
    case 'conv2dTranspose':
      return convFacts(spec, inputs);
    case 'maxPool2d':
    case 'pool':
    case 'globalPool':
      return poolingFacts(spec, inputs);
    case 'batchNorm':
    case 'layerNorm':
    case 'dropout':
      return normFacts(spec, inputs);
    case 'flatten':
    case 'reshape':
    case 'permute':
    case 'activation':
    case 'zeroPadding2d':
    case 'cropping1d':
    case 'cropping2d':
    case 'upSampling2d':
      return shapeFacts(spec, inputs);
    case 'recurrent':
      return recurrentFacts(spec, inputs);
    case 'bidirectional':
      return bidirectionalFacts(spec, inputs);
    case 'timeDistributed':
      return timeDistributedFacts(spec, inputs, layerFacts);
    case 'merge':
      return mergeFacts(spec, inputs);
    case 'concatenate':
      return concatenateFacts(spec, inputs);
    case 'multiHeadAttention':
      return attentionFacts(spec, inputs);
    case 'tfjsLayer':
      return tfjsLayerFacts(spec, inputs);
    case 'opaque':
      // Nothing is known about it: assume it keeps its (first) input's shape and costs nothing.
      return facts([...(inputs[0] ?? [])], 0, 0);
  }
}

