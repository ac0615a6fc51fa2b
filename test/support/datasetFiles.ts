// Datasets as users bring them, for the Data section's tests: a CSV table with a categorical label, the
// same with a text column and a broken row, a folder of PNG class folders (written with pngjs), and two
// small user models that take them (saved as tfjs's model.save() does).
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PNG } from 'pngjs';
import { saveLayersModel, tfl } from './userModels.js';

export const SPECIES = ['setosa', 'versicolor', 'virginica'];
/** Rows per species in the table (unbalanced on purpose: the section shows the balance). */
export const PER_SPECIES = [30, 20, 10];
export const IMAGE_CLASSES = { cat: 5, dog: 3 };

/** flowers.csv: four numeric features and a species name per row; 60 rows. */
export function writeFlowersCsv(path: string): void {
  const rows = ['sepal_length,sepal_width,petal_length,petal_width,species'];
  SPECIES.forEach((name, k) => {
    for (let i = 0; i < PER_SPECIES[k]; i++) rows.push([4 + k + i / 50, 3 - k / 3, 1 + 2 * k + i / 40, 0.2 + k, name].map(String).join(','));
  });
  writeFileSync(path, rows.join('\n') + '\n');
}

/** bad.csv: a text column 'colour' among the features, and row 5 (spreadsheet numbering) with a word for a number. */
export function writeBadCsv(path: string): void {
  const rows = ['sepal_length,colour,petal_length,petal_width,species'];
  for (let i = 0; i < 12; i++) rows.push([5, i % 2 ? 'red' : 'blue', i === 3 ? 'lots' : 1.5, 0.2, SPECIES[i % 3]].join(','));
  writeFileSync(path, rows.join('\n') + '\n');
}

/** images/<class>/<n>.png: 12×10 RGB pictures, each class its own colour. */
export function writeImageFolder(dir: string): void {
  Object.entries(IMAGE_CLASSES).forEach(([name, count], k) => {
    mkdirSync(join(dir, name), { recursive: true });
    for (let i = 0; i < count; i++) {
      const png = new PNG({ width: 12, height: 10 });
      for (let p = 0; p < 12 * 10; p++) png.data.set([k ? 40 : 220, 20 * i, k ? 200 : 30, 255], p * 4);
      writeFileSync(join(dir, name, `${i}.png`), PNG.sync.write(png));
    }
  });
}

/** A 4-feature, 3-class MLP (the CSV's model). */
export async function saveTableModel(dir: string): Promise<string> {
  const input = tfl.input({ shape: [4], name: 'features' });
  const hidden = tfl.layers.dense({ units: 8, activation: 'relu', name: 'hidden' }).apply(input) as tfl.SymbolicTensor;
  const out = tfl.layers.dense({ units: 3, activation: 'softmax', name: 'species' }).apply(hidden) as tfl.SymbolicTensor;
  return saveLayersModel(tfl.model({ inputs: input, outputs: out, name: 'flowers' }), dir);
}

/** An 8×8 RGB, 2-class classifier (the image folder's model). */
export async function saveImageModel(dir: string): Promise<string> {
  const input = tfl.input({ shape: [8, 8, 3], name: 'image' });
  const flat = tfl.layers.flatten({ name: 'flat' }).apply(input) as tfl.SymbolicTensor;
  const out = tfl.layers.dense({ units: 2, activation: 'softmax', name: 'animal' }).apply(flat) as tfl.SymbolicTensor;
  return saveLayersModel(tfl.model({ inputs: input, outputs: out, name: 'pets' }), dir);
}
