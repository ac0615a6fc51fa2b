import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PNG } from 'pngjs';
import { afterAll, describe, expect, it } from 'vitest';
import { validateDatasetDescription } from '../../engine/data/validateDataset.js';
import { zooModel } from '../../engine/model/zoo.js';
import { dataRefFrom } from '../../engine/node/trainingOptions.js';
import { DataRefSchema, describeData } from '../../engine/protocol/trainingSetup.js';
import { writeNpy } from '../../engine/wire/data/npy.js';
import { openUserData } from '../../engine/wire/data/openUserData.js';

const root = mkdtempSync(join(tmpdir(), 'shoal-dataset-json-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const codes = (raw: unknown) => validateDatasetDescription(raw).diagnostics.map((d) => `${d.severity} ${d.code} ${d.where.field}`);

describe('dataset description', () => {
  it('accepts what the README shows and returns it', () => {
    const d = { format: 'csv', source: 'table.csv', outputs: [{ columns: ['species'] }], validationSplit: 0.2, preprocessing: { normalize: { mean: 0, std: 1 }, labels: 'integer' } };
    expect(validateDatasetDescription(d)).toEqual({ description: d, diagnostics: [] });
    expect(validateDatasetDescription({ format: 'images', source: 'photos', preprocessing: { pixels: 'byte', imageSize: [64, 64] } }).description).toBeDefined();
    expect(DataRefSchema.parse({ kind: 'dataset', dataset: d })).toEqual({ kind: 'dataset', dataset: d });
  });

  it('gives coded diagnostics with the field for every mistake', () => {
    expect(codes({ format: 'xlsx', source: '' })).toEqual(['error dataset-schema format', 'error dataset-schema source']);
    expect(codes({ format: 'csv', source: 't.csv', labelColumn: 'y' })).toEqual(['error dataset-schema (top level)']);
    expect(codes({ format: 'images', source: 'p', inputs: [{ columns: ['a'] }] })).toEqual(['error dataset-feed-format inputs.0']);
    expect(codes({ format: 'jsonl', source: 't.jsonl', inputs: [{ columns: ['a'] }] })).toEqual(['error dataset-feed-field inputs.0']);
    expect(codes({ format: 'csv', source: 't.csv', inputs: [{ columns: ['a'] }, { layer: 'b', columns: ['b'] }] })).toEqual(['error dataset-feed-layer inputs.0.layer']);
    expect(codes({ format: 'csv', source: 't.csv', inputs: [{ columns: ['a', 'y'] }], outputs: [{ columns: ['y'] }] })).toEqual(['error dataset-column-twice outputs.0.columns']);
    expect(codes({ format: 'csv', source: 't.csv', preprocessing: { normalize: { mean: [1, 2], std: [1, 0, 3] } } })).toEqual(['error dataset-normalize-std preprocessing.normalize.std', 'error dataset-normalize-length preprocessing.normalize']);
    expect(codes({ format: 'csv', source: 'data.jsonl', preprocessing: { pixels: 'byte' } })).toEqual(['warning dataset-preprocessing-unused preprocessing.pixels', 'warning dataset-source-format format']);
    const warned = validateDatasetDescription({ format: 'tsv', source: 't.tsv', preprocessing: { padding: 'pre' } });
    expect(warned.description).toBeDefined();
    expect(warned.diagnostics[0].hint).toMatch(/Remove preprocessing\.padding/);
  });

  it('--data picks the format from the path: tables with their columns, image folders, NumPy folders, dataset.json', () => {
    const graph = zooModel('mlp');
    writeFileSync(join(root, 'table.csv'), 'a,b\n1,0\n');
    expect(dataRefFrom({ data: join(root, 'table.csv'), 'label-column': 'b', 'feature-columns': 'a, c', 'validation-split': '0.1' }, graph)).toEqual({
      kind: 'dataset', dataset: { format: 'csv', source: join(root, 'table.csv'), inputs: [{ columns: ['a', 'c'] }], outputs: [{ columns: ['b'] }], validationSplit: 0.1 },
    });
    expect(dataRefFrom({ data: join(root, 'x.tsv') }, graph)).toMatchObject({ dataset: { format: 'tsv' } });
    expect(dataRefFrom({ data: join(root, 'x.jsonl') }, graph)).toMatchObject({ dataset: { format: 'jsonl' } });
    expect(dataRefFrom({ data: join(root, 'x.npz') }, graph)).toMatchObject({ dataset: { format: 'npz' } });
    mkdirSync(join(root, 'photos', 'cat'), { recursive: true });
    writeFileSync(join(root, 'photos', 'cat', '1.png'), PNG.sync.write(new PNG({ width: 1, height: 1 })));
    expect(dataRefFrom({ data: join(root, 'photos') }, graph)).toEqual({ kind: 'dataset', dataset: { format: 'images', source: join(root, 'photos') } });
    mkdirSync(join(root, 'arrays'));
    expect(dataRefFrom({ data: join(root, 'arrays'), 'validation-split': '0.2' }, graph)).toEqual({ kind: 'npy', dir: join(root, 'arrays'), validationSplit: 0.2 });
    expect(() => dataRefFrom({ data: join(root, 'arrays'), 'label-column': 'y' }, graph)).toThrow(/--label-column and --feature-columns go with a \.csv or \.tsv file/);

    mkdirSync(join(root, 'described'));
    writeFileSync(join(root, 'described', 'dataset.json'), JSON.stringify({ format: 'csv', source: '../table.csv', name: 'tbl', validationSplit: 0.3 }));
    const ref = dataRefFrom({ data: join(root, 'described') }, graph);
    expect(ref).toEqual({ kind: 'dataset', file: join(root, 'described', 'dataset.json'), dataset: { format: 'csv', source: join(root, 'table.csv'), name: 'tbl', validationSplit: 0.3 } });
    expect(describeData(ref)).toBe(`tbl: csv ${join(root, 'table.csv')} (described by ${join(root, 'described', 'dataset.json')}) (validation split 0.3)`);
    expect(dataRefFrom({ data: join(root, 'described', 'dataset.json'), 'validation-split': '0.5' }, graph)).toMatchObject({ dataset: { validationSplit: 0.5 } });
    writeFileSync(join(root, 'bad.json'), JSON.stringify({ format: 'csv', source: 'x.csv', inputs: [{ key: 'k' }] }));
    expect(() => dataRefFrom({ data: join(root, 'bad.json') }, graph)).toThrow(/bad\.json is not a valid dataset description:\n {2}dataset-feed-field \(inputs\.0\)/);
  });

  it('opens a described dataset by its format, refusing relative paths', () => {
    const arrays = { inputs: [{ name: 'x', shape: [2], dtype: 'float32' }], targets: [{ name: 'y', shape: [], dtype: 'int32', range: [0, 1] as [number, number] }] };
    mkdirSync(join(root, 'npyset'));
    writeNpy(join(root, 'npyset', 'x.npy'), new Float32Array([1, 2, 3, 4]), [2, 2]);
    writeNpy(join(root, 'npyset', 'y.npy'), new Int32Array([1, 5]), [2]);
    expect(() => openUserData({ kind: 'dataset', dataset: { format: 'npy', source: join(root, 'npyset') } }, arrays, 1)).toThrow(/range over \[1, 5\], but the model accepts \[0, 1\]/);
    writeNpy(join(root, 'npyset', 'y.npy'), new Int32Array([1, 0]), [2]);
    const data = openUserData({ kind: 'dataset', dataset: { format: 'npy', source: join(root, 'npyset') } }, arrays, 1);
    expect([...data.train.gather(['x', 'y'], [1])]).toEqual([3, 4, 0]);
    data.close();
    expect(() => openUserData({ kind: 'dataset', dataset: { format: 'csv', source: 'table.csv' } }, arrays, 1)).toThrow(/not a full path/);
  });
});
