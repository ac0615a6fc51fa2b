import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { PNG } from 'pngjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dispatchCall } from '../../electron/rpcDispatch.js';
import { createStudioService, type StudioService } from '../../engine/node/api.js';
import { importModelFile } from '../../engine/node/modelImport.js';
import type { DatasetInspection, InspectDatasetRequest } from '../../engine/protocol/datasetInspect.js';
import { IMAGE_CLASSES, PER_SPECIES, SPECIES, saveImageModel, saveTableModel, writeBadCsv, writeFlowersCsv, writeImageFolder } from '../support/datasetFiles.js';
import { tf, writeNpyData } from '../support/userModels.js';

/**
 * The studio's inspectDataset on real files, through the shells' dispatcher as the renderer calls it:
 * a CSV with a categorical label, a folder of PNG class folders, data that does not fit the model and a
 * broken file — each answered with counts, shapes, class balance and samples, or with diagnostics that
 * name the section's field and the file and row.
 */
const root = mkdtempSync(join(tmpdir(), 'shoal-inspect-'));
const previous = process.env.SHOAL_DATA_DIR;
let service: StudioService;
let tableModel: string;
let imageModel: string;

const storedModel = (modelJson: string) => {
  const dir = dirname(modelJson);
  return importModelFile({ name: 'model.json', modelJson: JSON.parse(readFileSync(modelJson, 'utf8')), weights: [{ path: 'weights.bin', base64: readFileSync(join(dir, 'weights.bin')).toString('base64') }] }).source!.modelFile;
};

async function inspect(request: InspectDatasetRequest): Promise<DatasetInspection> {
  const result = await dispatchCall(service, { kind: 'call', id: 1, method: 'inspectDataset', params: [request] });
  if (!result.ok) throw new Error(result.error);
  return result.value as DatasetInspection;
}

beforeAll(async () => {
  process.env.SHOAL_DATA_DIR = join(root, 'shoal');
  await tf.setBackend('cpu');
  tableModel = storedModel(await saveTableModel(join(root, 'table-model')));
  imageModel = storedModel(await saveImageModel(join(root, 'image-model')));
  writeFlowersCsv(join(root, 'flowers.csv'));
  writeBadCsv(join(root, 'bad.csv'));
  writeImageFolder(join(root, 'images'));
  service = createStudioService({ shell: 'web' });
}, 60_000);

afterAll(async () => {
  await service?.close();
  if (previous === undefined) delete process.env.SHOAL_DATA_DIR;
  else process.env.SHOAL_DATA_DIR = previous;
  rmSync(root, { recursive: true, force: true });
});

describe('inspectDataset', () => {
  it('a CSV with a categorical label: counts, shapes against the model, class balance, the first rows', async () => {
    const csv = join(root, 'flowers.csv');
    const found = await inspect({ model: tableModel, loss: 'sparse_categorical_crossentropy', choice: { source: csv, validationSplit: 0.25 } });
    expect(found.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
    expect(found.format).toBe('csv');
    expect(found.counts).toEqual({ train: 45, validation: 15 });
    expect(found.columns).toEqual(['sepal_length', 'sepal_width', 'petal_length', 'petal_width', 'species']);
    expect(found.feeds).toEqual([
      { side: 'input', layer: 'features', modelShape: [4], dataShape: [4], status: 'match' },
      { side: 'output', layer: 'species', modelShape: [], dataShape: [], status: 'match' },
    ]);
    expect(found.classes).toEqual([{ output: 'species', names: SPECIES, counts: PER_SPECIES, counted: 60 }]);
    expect(found.samples.kind).toBe('table');
    if (found.samples.kind !== 'table') return;
    expect(found.samples.rows).toHaveLength(10);
    expect(found.samples.rows[0]).toEqual(['4', '3', '1', '0.2', 'setosa']);
    // What Train sends: the same description, its path absolute.
    expect(found.ref).toEqual({ kind: 'dataset', dataset: { format: 'csv', source: csv, validationSplit: 0.25 } });
  });

  it('a folder of PNG class folders: per-class counts and thumbnails (PNG data URLs, at most 64 px)', async () => {
    const found = await inspect({ model: imageModel, choice: { source: join(root, 'images'), pixels: 'byte' } });
    expect(found.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
    expect(found.format).toBe('images');
    expect(found.counts).toEqual({ train: 8, validation: 0 });
    expect(found.diagnostics.map((d) => [d.code, d.where.field])).toEqual([['dataset-no-validation', 'validationSplit']]);
    expect(found.classes).toEqual([{ output: 'animal', names: Object.keys(IMAGE_CLASSES), counts: Object.values(IMAGE_CLASSES), counted: 8 }]);
    expect(found.feeds[0]).toEqual({ side: 'input', layer: 'image', modelShape: [8, 8, 3], dataShape: [8, 8, 3], status: 'match' });
    if (found.samples.kind !== 'images') throw new Error(`samples are ${found.samples.kind}`);
    // Both classes show, taken in turn: cat, dog, cat, dog, cat, dog, cat, cat.
    expect(found.samples.images.map((i) => i.label)).toEqual(['cat', 'dog', 'cat', 'dog', 'cat', 'dog', 'cat', 'cat']);
    const first = found.samples.images[0];
    expect([first.width, first.height]).toEqual([12, 10]);
    const png = PNG.sync.read(Buffer.from(first.dataUrl.replace(/^data:image\/png;base64,/, ''), 'base64'));
    expect([png.width, png.height, png.data[0], png.data[2]]).toEqual([12, 10, 220, 30]);
    expect(found.ref).toEqual({ kind: 'dataset', dataset: { format: 'images', source: join(root, 'images'), preprocessing: { pixels: 'byte' } } });
  });

  it('a big image is thumbnailed to 64 px on its long side', async () => {
    const dir = join(root, 'big');
    mkdirSync(join(dir, 'a'), { recursive: true });
    mkdirSync(join(dir, 'b'), { recursive: true });
    const png = new PNG({ width: 200, height: 100 });
    png.data.fill(128);
    writeFileSync(join(dir, 'a', 'x.png'), PNG.sync.write(png));
    writeFileSync(join(dir, 'b', 'y.png'), PNG.sync.write(png));
    const found = await inspect({ model: imageModel, choice: { source: dir } });
    if (found.samples.kind !== 'images') throw new Error(`samples are ${found.samples.kind}`);
    expect(found.samples.images.map((i) => [i.width, i.height])).toEqual([[64, 32], [64, 32]]);
  });

  it('data that does not fit the model: the shape mismatch beside the column fields, the feed marked', async () => {
    const found = await inspect({ model: tableModel, loss: 'sparse_categorical_crossentropy', choice: { source: join(root, 'flowers.csv'), featureColumns: ['sepal_length', 'sepal_width'] } });
    const error = found.diagnostics.find((d) => d.severity === 'error')!;
    expect(error.where.field).toBe('featureColumns');
    expect(error.message).toContain("2 feature columns (sepal_length, sepal_width) for model input 'features', which takes 4 values per sample");
    expect(found.feeds.find((f) => f.layer === 'features')?.status).toBe('mismatch');
    expect(found.counts).toBeUndefined();
    // The file's head still shows, to pick the right columns from.
    expect(found.columns).toHaveLength(5);

    const images = await inspect({ model: tableModel, loss: 'sparse_categorical_crossentropy', choice: { source: join(root, 'images') } });
    expect(images.diagnostics.find((d) => d.severity === 'error')?.message).toContain("model input 'features' takes shape (4), not images");
    // The class balance comes from the folders even so.
    expect(images.classes[0].counts).toEqual([5, 3]);
  });

  it('a broken file: the reader\'s refusal with the field, the file and the row', async () => {
    const bad = join(root, 'bad.csv');
    const found = await inspect({ model: tableModel, loss: 'sparse_categorical_crossentropy', choice: { source: bad, featureColumns: ['sepal_length', 'colour', 'petal_length', 'petal_width'] } });
    const error = found.diagnostics.find((d) => d.severity === 'error')!;
    expect(error.where).toEqual({ field: 'featureColumns', file: bad, row: 2 });
    expect(error.message).toContain("column 'colour': \"blue\" is not a number");

    const word = await inspect({ model: tableModel, loss: 'sparse_categorical_crossentropy', choice: { source: bad, featureColumns: ['sepal_length', 'petal_length', 'petal_width', 'petal_width'] } });
    expect(word.diagnostics.find((d) => d.severity === 'error')?.where).toMatchObject({ field: 'featureColumns', file: bad, row: 5 });

    const label = await inspect({ model: tableModel, loss: 'sparse_categorical_crossentropy', choice: { source: join(root, 'flowers.csv'), labelColumn: 'species_name' } });
    expect(label.diagnostics.find((d) => d.severity === 'error')).toMatchObject({ where: { field: 'labelColumn' }, message: expect.stringContaining("no column 'species_name'") });
  });

  it('paths and descriptions the section cannot use are diagnostics on their field, never exceptions', async () => {
    const missing = await inspect({ model: tableModel, choice: { source: join(root, 'nope.csv') } });
    expect(missing.diagnostics.map((d) => [d.code, d.where.field])).toEqual([['dataset-source-missing', 'source']]);
    const relative = await inspect({ model: tableModel, choice: { source: 'flowers.csv' } });
    expect(relative.diagnostics[0].where.field).toBe('source');
    writeFileSync(join(root, 'table.dat'), 'a,b\n1,2\n');
    const unknown = await inspect({ model: tableModel, choice: { source: join(root, 'table.dat') } });
    expect(unknown.diagnostics.map((d) => [d.code, d.where.field])).toEqual([['dataset-format-unknown', 'format']]);
    const overridden = await inspect({ model: tableModel, choice: { source: join(root, 'table.dat'), format: 'csv', labelColumn: 'b', featureColumns: ['b'] } });
    expect(overridden.diagnostics.find((d) => d.code === 'dataset-column-twice')?.where.field).toBe('labelColumn');
    // A dataset.json beside the data: its findings concern that file.
    const described = join(root, 'described');
    mkdirSync(described);
    writeFileSync(join(described, 'dataset.json'), JSON.stringify({ format: 'csv', source: '../flowers.csv', validationSplit: 2 }));
    const json = await inspect({ model: tableModel, choice: { source: described } });
    expect(json.diagnostics[0]).toMatchObject({ code: 'dataset-schema', where: { field: 'source', file: join(described, 'dataset.json') } });
    // A malformed request is refused by the dispatcher, saying what.
    const refused = await dispatchCall(service, { kind: 'call', id: 2, method: 'inspectDataset', params: [{ model: tableModel }] });
    expect(refused).toMatchObject({ ok: false, error: expect.stringContaining('give either choice or description') });
  });

  it('JSON Lines and NumPy data show their first samples: token lists cut, arrays as rows, image-shaped arrays as thumbnails', async () => {
    const lines = join(root, 'tokens.jsonl');
    writeFileSync(lines, Array.from({ length: 12 }, (_, i) => JSON.stringify({ tokens: Array.from({ length: 20 }, (_, j) => (i + j) % 7), label: i % 2 })).join('\n') + '\n');
    const found = await inspect({ model: tableModel, choice: { source: lines } });
    expect(found.format).toBe('jsonl');
    expect(found.columns).toEqual(['tokens', 'label']);
    if (found.samples.kind !== 'table') throw new Error(`samples are ${found.samples.kind}`);
    expect(found.samples.rows).toHaveLength(10);
    expect(found.samples.rows[0]).toEqual(['[0, 1, 2, 3, 4, 5, 6, 0, … 20 in all]', '0']);
    // The model reads sequences of 4: longer ones are cut, as Keras's pad_sequences does.
    expect(found.counts).toEqual({ train: 12, validation: 0 });

    const npy = join(root, 'npy');
    writeNpyData(npy, { x: { shape: [8, 8, 3], kind: 'float' }, y: { shape: [], kind: { classes: 2 } } }, 20);
    const arrays = await inspect({ model: imageModel, choice: { source: npy, validationSplit: 0.25 } });
    expect(arrays.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
    expect(arrays.format).toBe('npy');
    expect(arrays.counts).toEqual({ train: 15, validation: 5 });
    expect(arrays.classes[0].counts.reduce((a, b) => a + b, 0)).toBe(20);
    if (arrays.samples.kind !== 'images') throw new Error(`samples are ${arrays.samples.kind}`);
    expect(arrays.samples.images).toHaveLength(8);
    expect(arrays.samples.images[0]).toMatchObject({ width: 8, height: 8, label: expect.stringMatching(/^[01]$/) });
  });

  it('a dropped file is stored in the data folder (mode 600), once per content, within the size cap', async () => {
    const base64 = readFileSync(join(root, 'flowers.csv')).toString('base64');
    const first = await dispatchCall(service, { kind: 'call', id: 3, method: 'uploadDataFile', params: [{ name: 'flowers.csv', base64 }] });
    if (!first.ok) throw new Error(first.error);
    const { path } = first.value as { path: string };
    expect(path).toMatch(new RegExp(`^${join(root, 'shoal', 'datasets')}/[0-9a-f]{32}/flowers\\.csv$`));
    expect(statSync(path).mode & 0o777).toBe(0o600);
    const again = await dispatchCall(service, { kind: 'call', id: 4, method: 'uploadDataFile', params: [{ name: 'flowers.csv', base64 }] });
    expect(again).toMatchObject({ ok: true, value: { path } });
    expect((await inspect({ model: tableModel, loss: 'sparse_categorical_crossentropy', choice: { source: path } })).counts).toEqual({ train: 60, validation: 0 });
    const named = await dispatchCall(service, { kind: 'call', id: 5, method: 'uploadDataFile', params: [{ name: '../x.csv', base64 }] });
    expect(named).toMatchObject({ ok: false, error: expect.stringContaining('plain .csv') });
    const big = await dispatchCall(service, { kind: 'call', id: 6, method: 'uploadDataFile', params: [{ name: 'big.csv', base64: 'A'.repeat(90 * 2 ** 20) }] });
    expect(big).toMatchObject({ ok: false, error: expect.stringContaining('at most 64 MiB') });
  });
});
