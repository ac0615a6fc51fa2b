import { describe, expect, it } from 'vitest';
import { importKerasModel } from '../../engine/model/import/importKeras.js';

/** A one-Dense Sequential model: the configs issue 35 found refused with the wrong cause. */
const dense = (units: unknown, shape: unknown[] = [null, 8]) => ({ class_name: 'Sequential', config: { name: 's', layers: [{ class_name: 'Dense', config: { name: 'd1', units, batch_input_shape: shape } }] } });
const errors = (doc: unknown) => importKerasModel(doc).diagnostics.filter((d) => d.severity === 'error');

describe('config refusals name the layer, the field, the value and what to do', () => {
  it('a wrong-typed size, an impossible size and a bad input dimension', () => {
    const [typed] = errors(dense('eight'));
    expect(typed).toMatchObject({ code: 'invalid-layer-config', where: { layer: 'd1' } });
    expect(typed.message).toBe('Layer "d1" (Dense): "units" should be a positive integer, got "eight".');
    const [huge] = errors(dense(2e9));
    expect(huge).toMatchObject({ code: 'invalid-layer-size', where: { layer: 'd1' } });
    expect(huge.message).toMatch(/units: 2000000000\) give it 1\.80e\+10 weights; one tfjs layer holds at most 4,294,967,296/);
    const [shape] = errors(dense(4, [null, -4]));
    expect(shape.message).toMatch(/declares the shape \[-4\] .* the dimension -4; every dimension must be a positive integer/);
  });

  it('a tfjs GraphModel is named as one, with the converter command for a LayersModel', () => {
    for (const doc of [{ format: 'graph-model', modelTopology: {} }, { modelTopology: { node: [{ name: 'x', op: 'Placeholder' }] } }]) {
      expect(() => importKerasModel(doc)).toThrow(/tfjs GraphModel/);
      try {
        importKerasModel(doc);
      } catch (err) {
        expect((err as { diagnostics: Array<{ hint: string }> }).diagnostics[0].hint).toMatch(/--output_format tfjs_layers_model/);
      }
    }
  });
});
