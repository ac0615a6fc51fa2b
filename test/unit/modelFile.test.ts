import { describe, expect, it } from 'vitest';
import { jsonErrorWhere, lineAndColumn, pickModelFile, readModelFile } from '../../renderer/src/model/readModelFile';

/** Opening a model.json in the studio: what opens, and what a malformed file says (what, where, what to do). */
const layer = (cls: string, name: string, config: object) => ({ class_name: cls, config: { name, ...config } });
const sequential = (layers: object[]) => JSON.stringify({ modelTopology: { class_name: 'Sequential', config: { name: 'tiny', layers } }, weightsManifest: [] });

describe('reading a model.json', () => {
  it('opens a tfjs Sequential model as a graph with shapes', () => {
    const result = readModelFile('model.json', sequential([layer('Dense', 'd1', { units: 8, batch_input_shape: [null, 4] }), layer('Dense', 'd2', { units: 2 })]));
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.graph.layers.map((l) => l.id)).toEqual(['d1_input', 'd1', 'd2']);
    expect(result.graph.layers[2].outputShape).toEqual([2]);
    expect(result.notes).toEqual([]);
  });

  it('opens a model with an unknown layer, noting it', () => {
    const result = readModelFile('model.json', sequential([layer('Dense', 'd1', { units: 8, batch_input_shape: [null, 4] }), layer('MyLayer', 'mine', {})]));
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.notes).toHaveLength(1);
    expect(result.notes[0]).toContain('layer mine');
    expect(result.notes[0]).toContain('MyLayer');
  });

  it('refuses text that is not JSON, pointing at the line and column', () => {
    const result = readModelFile('broken.json', '{\n  "modelTopology": {\n    "class_name": "Sequential",,\n  }\n}');
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.problem.what).toContain('not valid JSON');
    expect(result.problem.where).toMatch(/^broken\.json, line 3, column \d+$/);
    expect(result.problem.fix).toContain('model.json');
  });

  it('refuses an empty file and a truncated one', () => {
    const empty = readModelFile('empty.json', '');
    expect(!empty.ok && empty.problem.fix).toContain('empty');
    const cut = readModelFile('cut.json', '{"modelTopology": {"class_name": "Seq');
    expect(!cut.ok && cut.problem.where).toContain('cut.json');
  });

  it('refuses JSON that is not a Keras model', () => {
    const result = readModelFile('package.json', '{"name": "x", "version": "1.0.0"}');
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.problem.what).toContain('not a Keras or tfjs-layers model');
    expect(result.problem.where).toBe('package.json');
    expect(result.problem.fix).toContain('Re-export');
  });

  it('refuses a model with no drawable layers, naming the first problem', () => {
    const result = readModelFile('model.json', sequential([layer('Dense', 'd1', { units: 3 })]));
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.problem.what).toContain('no layers');
    expect(result.problem.where).toBe('model.json, layer d1_input');
    expect(result.problem.fix).toContain('batch_input_shape');
  });
});

describe('model file helpers', () => {
  it('lineAndColumn counts from 1', () => {
    expect(lineAndColumn('ab\ncd', 0)).toBe('line 1, column 1');
    expect(lineAndColumn('ab\ncd', 4)).toBe('line 2, column 2');
  });

  it('jsonErrorWhere reads both message styles', () => {
    expect(jsonErrorWhere('ab\ncd', 'Unexpected token } in JSON at position 3')).toBe('line 2, column 1');
    expect(jsonErrorWhere('x', `Expected ',' or '}' after property value in JSON at position 40 (line 4 column 7)`)).toBe('line 4, column 7');
    expect(jsonErrorWhere('x', 'something else')).toBeUndefined();
  });

  it('pickModelFile takes the .json among weight shards', () => {
    const files = [{ name: 'group1-shard1of1.bin' }, { name: 'Model.JSON' }];
    expect(pickModelFile(files)?.name).toBe('Model.JSON');
    expect(pickModelFile([{ name: 'a.bin' }, { name: 'b.bin' }])).toBeUndefined();
    expect(pickModelFile([{ name: 'topology' }])?.name).toBe('topology');
  });
});
