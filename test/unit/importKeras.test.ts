import { describe, expect, it } from 'vitest';
import { totalParams, totalWeights, type LayerNode, type ModelGraph } from '../../engine/model/graph.js';
import { importKerasModel } from '../../engine/model/import/importKeras.js';
import { mulberry32 } from '../../engine/util/prng.js';

/** Hand-written Keras documents: Keras 2 and 3 dialects, options tfjs cannot serialise, and bad input. */
const layerOf = (graph: ModelGraph, id: string): LayerNode => graph.layers.find((l) => l.id === id)!;

const input = (name: string, batchShape: (number | null)[]) => ({ class_name: 'InputLayer', name, config: { name, batch_input_shape: batchShape }, inbound_nodes: [] });
/** A Keras 2 functional layer: inbound nodes as [[[name, node, tensor, kwargs]]]. */
const k2 = (class_name: string, name: string, config: object, inputs: string[], kwargs: object = {}) => ({
  class_name,
  name,
  config: { name, ...config },
  inbound_nodes: [inputs.map((i, n) => [i, 0, 0, n === 0 ? kwargs : {}])],
});
const functional = (layers: object[], inputs: string[], outputs: string[]) => ({
  class_name: 'Functional',
  config: { name: 'm', layers, input_layers: inputs.map((i) => [i, 0, 0]), output_layers: outputs.map((o) => [o, 0, 0]) },
});

describe('importing Keras documents', () => {
  it('Keras 2 MultiHeadAttention (value as a keyword tensor): 4·(d·h·k + h·k) parameters', () => {
    const doc = functional(
      [
        input('q', [null, 10, 64]),
        input('v', [null, 7, 32]),
        k2('MultiHeadAttention', 'mha', { num_heads: 4, key_dim: 16, value_dim: null, output_shape: null, use_bias: true }, ['q'], { value: ['v', 0, 0] }),
      ],
      ['q', 'v'],
      ['mha'],
    );
    const { graph, diagnostics } = importKerasModel(doc);
    expect(diagnostics).toEqual([]);
    const mha = layerOf(graph, 'mha');
    expect(mha.inputs).toEqual(['q', 'v']);
    expect(mha.outputShape).toEqual([10, 64]);
    const [h, k] = [4, 16];
    // query 64·h·k + h·k, key and value from the 32-wide value input, output h·k·64 + 64.
    expect(mha.params).toBe(64 * h * k + h * k + 2 * (32 * h * k + h * k) + h * k * 64 + 64);
    // With d_model = h·k on all sides it is BERT's 4(d² + d).
    const square = importKerasModel(
      functional([input('x', [null, 5, 64]), k2('MultiHeadAttention', 'self', { num_heads: 4, key_dim: 16 }, ['x', 'x'])], ['x'], ['self']),
    );
    expect(layerOf(square.graph, 'self').params).toBe(4 * (64 * 64 + 64));
  });

  it('Keras 3 documents: batch_shape, { args, kwargs } inbound nodes, keras tensors', () => {
    const tensor = (layer: string, shape: (number | null)[]) => ({ class_name: '__keras_tensor__', config: { shape, dtype: 'float32', keras_history: [layer, 0, 0] } });
    const doc = {
      class_name: 'Functional',
      config: {
        name: 'k3',
        layers: [
          { class_name: 'InputLayer', name: 'tokens', config: { name: 'tokens', batch_shape: [null, 12, 8] }, inbound_nodes: [] },
          { class_name: 'Dense', name: 'proj', config: { name: 'proj', units: 16, activation: 'gelu', use_bias: true }, inbound_nodes: [{ args: [tensor('tokens', [null, 12, 8])], kwargs: {} }] },
          { class_name: 'MultiHeadAttention', name: 'attn', config: { name: 'attn', num_heads: 2, key_dim: 8 }, inbound_nodes: [{ args: [tensor('proj', [null, 12, 16])], kwargs: { value: tensor('proj', [null, 12, 16]) } }] },
          { class_name: 'Add', name: 'res', config: { name: 'res' }, inbound_nodes: [{ args: [[tensor('proj', [null, 12, 16]), tensor('attn', [null, 12, 16])]], kwargs: {} }] },
          { class_name: 'FancyNorm', name: 'fancy', config: { name: 'fancy' }, inbound_nodes: [{ args: [tensor('res', [null, 12, 16])], kwargs: {} }] },
          { class_name: 'GlobalAveragePooling1D', name: 'pool', config: { name: 'pool' }, inbound_nodes: [{ args: [tensor('fancy', [null, 12, 4])], kwargs: {} }] },
        ],
        input_layers: ['tokens', 0, 0],
        output_layers: ['pool', 0, 0],
      },
    };
    const { graph, diagnostics } = importKerasModel(doc);
    expect(diagnostics.map((d) => d.code)).toEqual(['unknown-layer']);
    expect(layerOf(graph, 'proj').spec).toEqual({ kind: 'denseNd', units: 16, useBias: true, activation: 'gelu' });
    expect(layerOf(graph, 'proj').forwardFlops).toBe(2 * 12 * 8 * 16);
    expect(layerOf(graph, 'res').inputs).toEqual(['proj', 'attn']);
    // The unknown layer's output shape comes from the shape Keras 3 recorded on its consumer's input.
    expect(layerOf(graph, 'fancy').outputShape).toEqual([12, 4]);
    expect(layerOf(graph, 'pool').outputShape).toEqual([4]);
    expect(graph.outputs).toEqual(['pool']);
  });

  it('options tfjs cannot round-trip, against hand counts', () => {
    const doc = functional(
      [
        input('img', [null, 32, 32, 8]),
        k2('SeparableConv2D', 'sep', { filters: 16, kernel_size: [3, 3], strides: [1, 1], padding: 'same', depth_multiplier: 2, use_bias: true }, ['img']),
        k2('DepthwiseConv2D', 'dw', { kernel_size: 3, strides: 1, padding: 'valid', dilation_rate: 2, depth_multiplier: 1, use_bias: false }, ['sep']),
        k2('Reshape', 'seq', { target_shape: [-1, 16] }, ['dw']),
        k2('Conv1D', 'causal', { filters: 4, kernel_size: 3, padding: 'causal', dilation_rate: 4 }, ['seq']),
        k2('GRU', 'gru', { units: 5, reset_after: true }, ['causal']),
      ],
      ['img'],
      ['gru'],
    );
    const { graph, diagnostics } = importKerasModel(doc);
    expect(diagnostics).toEqual([]);
    expect(layerOf(graph, 'sep').params).toBe(3 * 3 * 8 * 2 + 8 * 2 * 16 + 16);
    expect(layerOf(graph, 'dw').outputShape).toEqual([28, 28, 16]); // dilated 3×3 spans 5
    expect(layerOf(graph, 'seq').outputShape).toEqual([28 * 28, 16]);
    expect(layerOf(graph, 'causal').outputShape).toEqual([784, 4]);
    // Keras 2's GRU default: two bias vectors per gate.
    expect(layerOf(graph, 'gru').params).toBe(3 * (5 * (4 + 5) + 2 * 5));
  });

  it('fills unknown dimensions from the options, with a warning', () => {
    const doc = {
      class_name: 'Sequential',
      config: {
        name: 'text',
        layers: [
          { class_name: 'InputLayer', config: { name: 'ids', batch_input_shape: [null, null] } },
          { class_name: 'Embedding', config: { name: 'emb', input_dim: 100, output_dim: 8 } },
          { class_name: 'LSTM', config: { name: 'lstm', units: 4 } },
        ],
      },
    };
    const fallback = importKerasModel(doc);
    expect(fallback.graph.layers[0].outputShape).toEqual([128]);
    expect(fallback.diagnostics).toMatchObject([{ severity: 'warning', code: 'unknown-dimension', where: { layer: 'ids' } }]);
    expect(importKerasModel(doc, { sequenceLength: 40 }).graph.layers[1].outputShape).toEqual([40, 8]);
    const override = importKerasModel(doc, { inputShapes: { ids: [12] } });
    expect([override.graph.layers[1].outputShape, override.diagnostics]).toEqual([[12, 8], []]);
    expect(totalParams(override.graph)).toBe(800 + 4 * (4 * (8 + 4) + 4));
  });

  it('an unknown layer becomes an opaque node with a warning naming its class', () => {
    const doc = functional([input('x', [null, 6]), k2('MyCustomLayer', 'custom', { alpha: 3 }, ['x']), k2('Dense', 'out', { units: 2 }, ['custom'])], ['x'], ['out']);
    const { graph, diagnostics } = importKerasModel(doc);
    expect(layerOf(graph, 'custom').spec).toEqual({ kind: 'opaque', className: 'MyCustomLayer', config: { name: 'custom', alpha: 3 } });
    expect(layerOf(graph, 'custom').outputShape).toEqual([6]);
    expect(totalWeights(graph)).toBe(6 * 2 + 2);
    expect(diagnostics).toHaveLength(1);
    expect(diagnostics[0]).toMatchObject({ severity: 'warning', code: 'unknown-layer', where: { layer: 'custom' } });
    expect(diagnostics[0].message).toMatch(/MyCustomLayer/);
  });

  it('reports malformed documents as diagnostics', () => {
    const cases: [object, string][] = [
      [{ class_name: 'Sequential', config: { name: 's' } }, 'malformed-model'],
      [{ class_name: 'Sequential', config: { layers: [{ config: {} }, { class_name: 'Dense', config: { name: 'd', units: 2, batch_input_shape: [null, 3] } }] } }, 'malformed-model'],
      [{ class_name: 'Sequential', config: { layers: [{ class_name: 'Dense', config: { name: 'd', units: 'ten', batch_input_shape: [null, 3] } }] } }, 'invalid-layer-config'],
      [{ class_name: 'Sequential', config: { layers: [{ class_name: 'Dense', config: { name: 'd', units: 2 } }] } }, 'missing-input-shape'],
      [functional([input('x', [null, 4]), k2('Dense', 'd', { units: 3 }, ['nowhere'])], ['x'], ['d']), 'unresolved-input'],
      [functional([input('a', [null, 4]), input('b', [null, 5]), k2('Add', 'sum', {}, ['a', 'b'])], ['a', 'b'], ['sum']), 'shape-mismatch'],
      [functional([input('x', [null, 4]), { class_name: 'Dense', name: 'd', config: { units: 2 }, inbound_nodes: [[['x', 'zero']]] }], ['x'], ['d']), 'malformed-model'],
      [{ class_name: 'Model', config: { name: 'm', layers: [input('x', [null, 2])] } }, 'malformed-model'],
    ];
    for (const [doc, code] of cases) {
      const { diagnostics } = importKerasModel(doc);
      expect(diagnostics.map((d) => d.code), JSON.stringify(doc)).toContain(code);
      for (const d of diagnostics) expect(d.hint.length).toBeGreaterThan(0);
    }
  });

  it('throws one clear error for a document that is not a model at all', () => {
    for (const doc of [null, 42, 'not json {', '[]', { weightsManifest: [] }, { modelTopology: { class_name: 'Dense' } }]) {
      expect(() => importKerasModel(doc)).toThrow(/not a Keras or tfjs-layers model|not valid JSON/);
    }
  });

  it('never crashes on a damaged document (seeded fuzz)', () => {
    const base = functional(
      [
        input('x', [null, 8, 8, 3]),
        k2('Conv2D', 'c', { filters: 4, kernel_size: 3, padding: 'same' }, ['x']),
        k2('BatchNormalization', 'bn', { axis: -1 }, ['c']),
        k2('Bidirectional', 'skip', { layer: { class_name: 'LSTM', config: { units: 2 } }, merge_mode: 'concat' }, ['bn']),
        k2('Flatten', 'f', {}, ['bn']),
        k2('Dense', 'd', { units: 3 }, ['f']),
      ],
      ['x'],
      ['d'],
    );
    const random = mulberry32(7);
    const junk = [null, -1, 0, 'x', [], {}, [null], 3.5, true];
    for (let trial = 0; trial < 300; trial++) {
      const doc = JSON.parse(JSON.stringify(base));
      // Replace one to three values somewhere inside the model config with junk (damage to the
      // document's outer keys is the clear-error case above).
      for (let hits = 1 + Math.floor(random() * 3); hits > 0; hits--) {
        let node = doc.config;
        for (let depth = 0; depth < 8; depth++) {
          const keys = Object.keys(node);
          const key = keys[Math.floor(random() * keys.length)];
          if (typeof node[key] !== 'object' || node[key] === null || random() < 0.25) {
            node[key] = junk[Math.floor(random() * junk.length)];
            break;
          }
          node = node[key];
        }
      }
      try {
        const { graph } = importKerasModel(doc);
        expect(Array.isArray(graph.layers)).toBe(true);
      } catch (err) {
        expect((err as Error).message).toMatch(/^This is not a Keras or tfjs-layers model/);
      }
    }
  });
});
