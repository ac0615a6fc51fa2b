/**
 * Small Keras model documents written by hand, as tfjs's model.json writes them (tfjs / Keras 2
 * inbound nodes), for tests of the importer's limits and for fuzzing: no tfjs needed to build them.
 */
type Json = Record<string, unknown>;

export function dense(name: string, units: unknown, inputShape?: number[]): Json {
  return { class_name: 'Dense', config: { name, units, activation: 'relu', ...(inputShape ? { batch_input_shape: [null, ...inputShape] } : {}) } };
}

export function sequential(layers: Json[], name = 'seq'): Json {
  return { modelTopology: { class_name: 'Sequential', config: { name, layers } } };
}

const node = (...inputs: [string, number][]) => [inputs.map(([layer, n]) => [layer, n, 0, {}])];

/** A Functional chain or DAG: each layer names the layer it takes (`in` is the input, width 8). */
export function functional(layers: { name: string; inbound: string; units: number }[], output: string): Json {
  return {
    class_name: 'Functional',
    config: {
      name: 'fn',
      layers: [
        { class_name: 'InputLayer', name: 'in', config: { name: 'in', batch_input_shape: [null, 8] }, inbound_nodes: [] },
        ...layers.map((l) => ({ class_name: 'Dense', name: l.name, config: { name: l.name, units: l.units, activation: 'relu' }, inbound_nodes: node([l.inbound, 0]) })),
      ],
      input_layers: [['in', 0, 0]],
      output_layers: [[output, 0, 0]],
    },
  };
}

/** A functional model whose one layer is `inner`, a sub-model, called `calls` times in a chain. */
function wrap(inner: Json, calls: number, name: string): Json {
  const innerLayer = { class_name: 'Functional', name: 'sub', config: inner.config, inbound_nodes: Array.from({ length: calls }, (_, k) => node(k === 0 ? ['in', 0] : ['sub', k - 1])[0]) };
  return {
    class_name: 'Functional',
    config: {
      name,
      layers: [{ class_name: 'InputLayer', name: 'in', config: { name: 'in', batch_input_shape: [null, 4] }, inbound_nodes: [] }, innerLayer],
      input_layers: [['in', 0, 0]],
      output_layers: [['sub', calls - 1, 0]],
    },
  };
}

const leaf = (): Json => ({
  class_name: 'Functional',
  config: {
    name: 'leaf',
    layers: [
      { class_name: 'InputLayer', name: 'in', config: { name: 'in', batch_input_shape: [null, 4] }, inbound_nodes: [] },
      { class_name: 'Dense', name: 'd', config: { name: 'd', units: 4 }, inbound_nodes: node(['in', 0]) },
    ],
    input_layers: [['in', 0, 0]],
    output_layers: [['d', 0, 0]],
  },
});

/** Sub-models each calling the one below twice, `levels` deep: 2^levels Dense layers from a few KB. */
export function nestedTwice(levels: number): Json {
  let model = leaf();
  for (let k = 0; k < levels; k++) model = wrap(model, 2, `m${k}`);
  return model;
}

/** Sub-models each calling the one below once, `depth` deep. */
export function nestedChain(depth: number): Json {
  let model = leaf();
  for (let k = 0; k < depth; k++) model = wrap(model, 1, `m${k}`);
  return model;
}
