/**
 * A synthetic Keras / tfjs-layers `model.json` of a given number of layers, for the UI benchmark and
 * the end-to-end tests: a Sequential MLP whose hidden part repeats Dense → Activation → Dropout, ending
 * in a 10-way softmax. Every layer is one the importer knows, so the graph has exactly `layers` layers
 * (the importer adds the input layer: `layers` counts it). No groups: nothing folds, all are drawn.
 */
export function syntheticKerasModel(layers: number, name = `synthetic-${layers}`): string {
  const config = (cls: string, layerName: string, extra: Record<string, unknown>) => ({ class_name: cls, config: { name: layerName, trainable: true, ...extra } });
  const body: object[] = [];
  const hidden = Math.max(1, layers - 2);
  for (let i = 0; i < hidden; i++) {
    const n = Math.floor(i / 3) + 1;
    const kind = i % 3;
    if (kind === 0) body.push(config('Dense', `dense_${n}`, { units: 64 + (n % 4) * 32, activation: 'linear', use_bias: true, ...(i === 0 ? { batch_input_shape: [null, 784] } : {}) }));
    else if (kind === 1) body.push(config('Activation', `relu_${n}`, { activation: 'relu' }));
    else body.push(config('Dropout', `dropout_${n}`, { rate: 0.1 }));
  }
  body.push(config('Dense', 'logits', { units: 10, activation: 'softmax' }));
  return JSON.stringify({
    format: 'layers-model',
    generatedBy: 'shoal synthetic',
    convertedBy: null,
    modelTopology: { class_name: 'Sequential', config: { name, layers: body }, keras_version: 'tfjs-layers 4.22.0', backend: 'tensor_flow.js' },
    weightsManifest: [],
  });
}
