import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PNG } from 'pngjs';
import { writeNpy } from '../../engine/wire/data/npy.js';
import type { BadInputCase } from './badInputCases.js';

/**
 * The bad-input suite's user models and data: a 4 → 2 softmax model.json with its weights given
 * short, long, missing and transposed, NumPy, CSV and image data each wrong in one way, and cluster
 * files that hold no cluster. Two of them (the transposed kernel, the corrupt PNG) are only found
 * by an agent, after the job started: those cases show that the job leaves no run folder behind.
 */
export function badDataFiles(root: string) {
  const dir = (name: string) => {
    const path = join(root, name);
    mkdirSync(path, { recursive: true });
    return path;
  };
  const model = (name: string, kernel: number[], bytes: number | null) => {
    const folder = dir(name);
    const layers = [{ class_name: 'Dense', config: { name: 'd1', units: 2, activation: 'softmax', batch_input_shape: [null, 4] } }];
    const weights = [{ name: 'd1/kernel', shape: kernel, dtype: 'float32' }, { name: 'd1/bias', shape: [2], dtype: 'float32' }];
    writeFileSync(join(folder, 'model.json'), JSON.stringify({ format: 'layers-model', modelTopology: { class_name: 'Sequential', config: { name: 'tiny', layers } }, weightsManifest: [{ paths: ['weights.bin'], weights }] }));
    if (bytes !== null) writeFileSync(join(folder, 'weights.bin'), Buffer.alloc(bytes));
    return join(folder, 'model.json');
  };
  const npy = (name: string, labels: number[]) => {
    const folder = dir(name);
    writeNpy(join(folder, 'x.npy'), new Float32Array(labels.length * 4).fill(0.5), [labels.length, 4]);
    writeNpy(join(folder, 'y.npy'), Float64Array.from(labels), [labels.length], { descr: '<f8' });
    return folder;
  };
  const png = () => {
    const image = new PNG({ width: 2, height: 2 });
    image.data.fill(120);
    return PNG.sync.write(image);
  };
  const images = (name: string, classes: string[], perClass: number) => {
    const folder = dir(name);
    for (const c of classes) {
      mkdirSync(join(folder, c), { recursive: true });
      for (let i = 0; i < perClass; i++) writeFileSync(join(folder, c, `${i}.png`), png());
    }
    return folder;
  };
  // 1e9 weights (4 × 2e8 and the bias): 3.7 GiB of parameters, with gradients and optimizer state far over a 4 GiB cpu-core device.
  const huge = join(dir('huge-model'), 'model.json');
  writeFileSync(huge, JSON.stringify({ format: 'layers-model', modelTopology: { class_name: 'Sequential', config: { name: 'huge', layers: [{ class_name: 'Dense', config: { name: 'd1', units: 200_000_000, batch_input_shape: [null, 4] } }] } } }));
  const imageModel = join(dir('image-model'), 'model.json');
  writeFileSync(imageModel, JSON.stringify({ format: 'layers-model', modelTopology: { class_name: 'Sequential', config: { name: 'img', layers: [{ class_name: 'Flatten', config: { name: 'flat', batch_input_shape: [null, 2, 2, 3] } }, { class_name: 'Dense', config: { name: 'd1', units: 2, activation: 'softmax' } }] } } }));
  const corrupt = images('images-corrupt', ['cat', 'dog'], 4);
  writeFileSync(join(corrupt, 'dog', '3.png'), png().subarray(0, 30));
  const csv = join(root, 'word-in-cell.csv');
  writeFileSync(csv, 'a,b,c,d,label\n' + Array.from({ length: 10 }, (_, i) => `1,2,${i === 3 ? 'lots' : 3},4,${i % 2}`).join('\n') + '\n');
  const described = dir('described');
  writeFileSync(join(described, 'dataset.json'), JSON.stringify({ format: 'csv', source: 'gone.csv' }));
  const clusterFile = (name: string, text: string) => (writeFileSync(join(root, name), text), join(root, name));
  return {
    model: model('model', [4, 2], 40),
    shortWeights: model('short-weights', [4, 2], 20),
    longWeights: model('long-weights', [4, 2], 44),
    noWeights: model('no-weights', [4, 2], null),
    transposed: model('transposed', [2, 4], 40),
    npy: npy('npy', Array.from({ length: 16 }, (_, i) => i % 2)),
    halfLabels: npy('half-labels', Array.from({ length: 16 }, (_, i) => (i === 5 ? 0.5 : i % 2))),
    huge,
    imageModel,
    emptyClasses: (dir('empty-classes/cat'), dir('empty-classes/dog'), join(root, 'empty-classes')),
    oneClass: images('one-class', ['cat'], 4),
    corrupt,
    csv,
    described: join(described, 'dataset.json'),
    clusterList: clusterFile('cluster-list.json', '[]'),
    clusterEmpty: clusterFile('cluster-empty.json', '{}'),
  };
}

/** A case per check of the preflight, the data readers and the cluster commands. */
export function badDataCases(f: ReturnType<typeof badDataFiles>, outFor: () => string): BadInputCase[] {
  // Two steps of batch 4 unless the case says otherwise (a later option of the same name wins).
  const train = (model: string, data: string, ...more: string[]) => ['train', '--model', model, '--data', data, '--cluster', 'local:1', '--batch', '4', ...(more.some((m) => m.startsWith('--epochs')) ? [] : ['--steps', '2']), '--out', outFor(), ...more];
  const c = (name: string, args: string[], names: string[], exit: 1 | 2 = 1): BadInputCase => ({ name, args, exit, names });
  return [
    c('train weights too short', train(f.shortWeights, f.npy), ['is truncated: expected 40 bytes, found 20']),
    c('train weights too long', train(f.longWeights, f.npy), ['4 more than the 40']),
    c('train weights missing', train(f.noWeights, f.npy), ['is missing']),
    c('train a transposed kernel (found by the agent)', train(f.transposed, f.npy), ['has shape [2,4] (8 values) in the weights file but [4,2]']),
    c('train a corrupt PNG (found by the agent)', train(f.imageModel, f.corrupt), [join(f.corrupt, 'dog', '3.png')]),
    c('train --epochs 1e300', train(f.model, f.npy, '--epochs=1e300'), ['--epochs "1e300": too large; expected a number above 0 and at most 1000000000']),
    c('train --steps 1e15', train(f.model, f.npy, '--steps=1e15'), ['--steps "1e15": too large']),
    c('train --lr 1e300', train(f.model, f.npy, '--lr=1e300'), ['--lr "1e300": too large; expected a number above 0 and at most 1000000']),
    c('train --batch above the samples', train(f.model, f.npy, '--batch=64'), ['The global batch 64 (--batch']),
    c('train a CSV cell that is a word', train(f.model, f.csv), [`row 5, column 'c': "lots" is not a number`]),
    c('train empty class folders', train(f.imageModel, f.emptyClasses), ['(cat, dog) hold no .png or .jpg images']),
    c('train one class for two', train(f.imageModel, f.oneClass), [`one class ("cat") for model output 'd1', which has 2`]),
    c('train a class id 0.5', train(f.model, f.halfLabels), ['sample 5: 0.5 is not a whole number']),
    c("train a dataset.json's missing source", train(f.model, f.described), [`Data (the source of ${f.described})`]),
    c('plan over memory', ['plan', '--model', f.huge, '--plan', 'pp1-dp1', '--cluster', 'local:1'], ['plan-out-of-memory']),
    c('plan --cluster []', ['plan', '--model', 'mlp', '--cluster', f.clusterList], ['an empty list [], not a cluster']),
    c('plan --cluster {}', ['plan', '--model', 'mlp', '--cluster', f.clusterEmpty], ['an empty object {}, not a cluster']),
    c('cluster add --host "not a host"', ['cluster', 'add', 'lab', '--host', 'not a host'], ['"not a host" is not a host']),
    c('cluster add the same host twice', ['cluster', 'add', 'lab', '--host', 'me@node-1', '--host', 'me@node-1'], ['--host me@node-1 is given twice']),
  ];
}
