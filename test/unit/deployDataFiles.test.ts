import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { dataFiles, markOnHosts } from '../../engine/node/deploy/dataFiles.js';
import { digestFile, digestFiles, digestScript, parseDigestLines } from '../../engine/node/deploy/fileDigest.js';
import { jobInputs } from '../../engine/node/deploy/jobInputs.js';
import type { ModelGraph } from '../../engine/model/graph.js';
import type { TrainingSetup } from '../../engine/protocol/trainingSetup.js';

/**
 * What a deploy uploads of a dataset (the files its reader opens, nothing else) and how it is named:
 * a cheap digest (size, first and last MiB) that the host computes the same way, cached by size and mtime.
 */
let root: string;
const saved = process.env.XDG_CACHE_HOME;

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'shoal-data-files-'));
  process.env.XDG_CACHE_HOME = join(root, 'cache');
});
afterAll(() => {
  rmSync(root, { recursive: true, force: true });
  if (saved === undefined) delete process.env.XDG_CACHE_HOME;
  else process.env.XDG_CACHE_HOME = saved;
});

const bytes = (n: number, seed: number) => Buffer.from(Array.from({ length: n }, (_, i) => (i * 31 + seed * 7) & 255));

describe('fileDigest', () => {
  test('the host-side script gives the same digests as this machine, and names files it cannot read', () => {
    const dir = join(root, 'digests');
    mkdirSync(join(dir, 'sub'), { recursive: true });
    const sizes = { 'empty.bin': 0, 'small.bin': 1000, 'mib.bin': 1024 * 1024, 'sub/big.bin': 3 * 1024 * 1024 + 17 };
    for (const [name, n] of Object.entries(sizes)) writeFileSync(join(dir, name), bytes(n, n % 13));
    const names = [...Object.keys(sizes), 'missing.bin', 'sub'];
    const out = execFileSync(process.execPath, ['-'], { input: digestScript(dir, names), encoding: 'utf8' });
    const theirs = parseDigestLines(out);
    for (const name of Object.keys(sizes)) expect(theirs.get(name), name).toEqual({ rel: name, ...digestFile(join(dir, name)) });
    expect(theirs.get('missing.bin')).toEqual({ rel: 'missing.bin', error: 'ENOENT' });
    expect(theirs.get('sub')).toMatchObject({ rel: 'sub' });
    expect('digest' in theirs.get('sub')!).toBe(false);
  });

  test('a change in the middle of a big file is not seen; one in its last MiB is', () => {
    const file = join(root, 'big.bin');
    const data = bytes(4 * 1024 * 1024, 3);
    writeFileSync(file, data);
    const before = digestFile(file).digest;
    data[2 * 1024 * 1024] ^= 1;
    writeFileSync(file, data);
    expect(digestFile(file).digest).toBe(before);
    data[data.length - 5] ^= 1;
    writeFileSync(file, data);
    expect(digestFile(file).digest).not.toBe(before);
  });

  test('digests are cached by size and mtime: a rewrite that keeps both is not seen, a new mtime is', () => {
    const file = join(root, 'cached.bin');
    writeFileSync(file, bytes(5000, 1));
    // Whole seconds, so that setting the same mtime again restores it exactly.
    const atime = new Date(1_700_000_000_000), mtime = new Date(1_700_000_000_000);
    utimesSync(file, atime, mtime);
    const first = digestFiles([file])[0];
    writeFileSync(file, bytes(5000, 2));
    utimesSync(file, atime, mtime);
    expect(digestFiles([file])[0]).toEqual(first);
    utimesSync(file, atime, new Date(mtime.getTime() + 5000));
    expect(digestFiles([file])[0].digest).not.toBe(first.digest);
    expect(digestFiles([file])[0]).toEqual(digestFile(file));
  });
});

describe('dataFiles', () => {
  test('a CSV table is its one file (its cached index stays here); the data moves to the upload folder', () => {
    const csv = join(root, 'table.csv');
    writeFileSync(csv, 'a,b\n1,2\n');
    writeFileSync(`${csv}.shoal-index.json`, '{}');
    const files = dataFiles({ kind: 'dataset', dataset: { format: 'csv', source: csv } })!;
    expect(files).toMatchObject({ dir: root, relatives: ['table.csv'], source: 'table.csv', onHosts: false });
    expect(files.movedTo('~/.shoal/inputs/h/data')).toEqual({ kind: 'dataset', dataset: { format: 'csv', source: '~/.shoal/inputs/h/data/table.csv' } });
  });

  test('an image folder is its class folders of images (no hidden files, nothing else); a NumPy folder includes val/', () => {
    const images = join(root, 'images');
    for (const c of ['cat', 'dog', '.cache']) mkdirSync(join(images, c), { recursive: true });
    for (const f of ['cat/a.png', 'cat/b.JPG', 'cat/.hidden.png', 'cat/notes.txt', 'dog/c.jpeg', '.cache/x.png']) writeFileSync(join(images, f), 'x');
    writeFileSync(join(images, 'README.md'), 'x');
    expect(dataFiles({ kind: 'dataset', dataset: { format: 'images', source: images } })!.relatives).toEqual(['cat/a.png', 'cat/b.JPG', 'dog/c.jpeg']);

    // A split made by hand: train/<class>/ and val/<class>/.
    const split = join(root, 'split');
    for (const f of ['train/cat/a.png', 'train/dog/b.png', 'val/cat/c.png', 'val/.x/d.png']) {
      mkdirSync(join(split, f, '..'), { recursive: true });
      writeFileSync(join(split, f), 'x');
    }
    expect(dataFiles({ kind: 'dataset', dataset: { format: 'images', source: split } })!.relatives).toEqual(['train/cat/a.png', 'train/dog/b.png', 'val/cat/c.png']);

    const npy = join(root, 'npy');
    mkdirSync(join(npy, 'val'), { recursive: true });
    for (const f of ['x.npy', 'y.npy', 'val/x.npy', 'val/y.npy', 'notes.txt']) writeFileSync(join(npy, f), 'x');
    const files = dataFiles({ kind: 'npy', dir: npy })!;
    expect(files.relatives).toEqual(['x.npy', 'y.npy', 'val/x.npy', 'val/y.npy']);
    expect(files.movedTo('~/up')).toEqual({ kind: 'npy', dir: '~/up' });
    expect(dataFiles({ kind: 'synthetic', samples: 4, validation: 1 })).toBeNull();
  });

  test('--data-on-hosts marks described data and NumPy folders; data without files is refused', () => {
    expect(markOnHosts({ kind: 'npy', dir: '/shared/d', validationSplit: 0.2 }, '--data-on-hosts')).toEqual({ kind: 'dataset', dataset: { format: 'npy', source: '/shared/d', location: 'hosts', validationSplit: 0.2 } });
    expect(markOnHosts({ kind: 'dataset', dataset: { format: 'csv', source: '/s/t.csv' } }, '--data-on-hosts')).toEqual({ kind: 'dataset', dataset: { format: 'csv', source: '/s/t.csv', location: 'hosts' } });
    expect(() => markOnHosts({ kind: 'synthetic', samples: 4, validation: 1 }, '--data-on-hosts')).toThrow(/--data-on-hosts takes a data file or folder .* synthetic data has no files/);
  });
});

describe('jobInputs', () => {
  const graph = { outputs: ['y'] } as unknown as ModelGraph;
  const training = (data: TrainingSetup['data']): TrainingSetup => ({ data, losses: [], trainSamples: 1, validationSamples: 0 });

  test('named by names, sizes and digests: the same data gives the same hash, a changed file another', () => {
    const csv = join(root, 'named.csv');
    writeFileSync(csv, 'a,b\n1,2\n');
    const ref = { kind: 'dataset' as const, dataset: { format: 'csv' as const, source: csv } };
    const a = jobInputs(graph, training(ref))!;
    expect(a.files).toEqual([expect.objectContaining({ local: csv, relative: 'data/named.csv', bytes: 8 })]);
    expect(jobInputs(graph, training(ref))!.hash).toBe(a.hash);
    expect(a.remote().training.data).toEqual({ kind: 'dataset', dataset: { format: 'csv', source: `~/.shoal/inputs/${a.hash}/data/named.csv` } });
    writeFileSync(csv, 'a,b\n1,3\n');
    utimesSync(csv, new Date(), new Date(Date.now() + 10_000));
    expect(jobInputs(graph, training(ref))!.hash).not.toBe(a.hash);
  });

  test("a model's --layers module travels as layers/<name>, and the job's processes register it there", () => {
    const dir = join(root, 'custom-model');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'model.json'), JSON.stringify({ modelTopology: {}, weightsManifest: [{ paths: ['w.bin'], weights: [] }] }));
    writeFileSync(join(dir, 'w.bin'), '');
    writeFileSync(join(root, 'my-layers.mjs'), 'export function register() {}\n');
    const withLayers = { ...graph, source: { modelFile: join(dir, 'model.json'), layersFile: join(root, 'my-layers.mjs') } } as ModelGraph;
    const inputs = jobInputs(withLayers, training({ kind: 'synthetic', samples: 4, validation: 1 }))!;
    expect(inputs.files.map((f) => f.relative)).toEqual(['model/model.json', 'model/w.bin', 'layers/my-layers.mjs']);
    const base = `~/.shoal/inputs/${inputs.hash}`;
    expect(inputs.remote().model.source).toEqual({ modelFile: `${base}/model/model.json`, layersFile: `${base}/layers/my-layers.mjs` });
  });

  test('an image folder goes as data/<class>/<image>, and the job reads the folder there', () => {
    const images = join(root, 'pictures');
    for (const c of ['a', 'b']) mkdirSync(join(images, c), { recursive: true });
    for (const f of ['a/1.png', 'b/2.jpg']) writeFileSync(join(images, f), f);
    const inputs = jobInputs(graph, training({ kind: 'dataset', dataset: { format: 'images', source: images } }))!;
    expect(inputs.files.map((f) => f.relative)).toEqual(['data/a/1.png', 'data/b/2.jpg']);
    expect(inputs.bytes).toBe(14);
    expect(inputs.remote().training.data).toEqual({ kind: 'dataset', dataset: { format: 'images', source: `~/.shoal/inputs/${inputs.hash}/data` } });
  });

  test('data on the hosts is not uploaded: its files and digests are what each host must match, and its path stays', () => {
    const csv = join(root, 'shared.csv');
    writeFileSync(csv, 'a,b\n1,2\n');
    const ref = { kind: 'dataset' as const, dataset: { format: 'csv' as const, source: csv, location: 'hosts' as const } };
    const inputs = jobInputs(graph, training(ref))!;
    expect(inputs.files).toEqual([]);
    expect(inputs.onHosts).toEqual({ dir: root, files: [{ local: csv, relative: 'shared.csv', bytes: 8, digest: digestFile(csv).digest }] });
    expect(inputs.remote().training.data).toEqual(ref);
  });
});
