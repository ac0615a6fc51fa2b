import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { DatasetDescription } from '../../engine/data/datasetDescription.js';
import type { ModelArrays } from '../../engine/data/modelArrays.js';
import { parseRecord } from '../../engine/wire/data/csvRecord.js';
import { openCsvTable } from '../../engine/wire/data/csvTable.js';

const root = mkdtempSync(join(tmpdir(), 'shoal-csv-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const classifier = (features: number, classes = 3): ModelArrays => ({
  inputs: [{ name: 'x', shape: [features], dtype: 'float32' }],
  targets: [{ name: 'y', shape: [], dtype: 'int32', range: [0, classes - 1] }],
});
const csv = (name: string, text: string, extra: Partial<DatasetDescription> = {}): DatasetDescription => {
  writeFileSync(join(root, name), text);
  return { format: name.endsWith('.tsv') ? 'tsv' : 'csv', source: join(root, name), ...extra };
};

// What Excel's "CSV UTF-8" and LibreOffice write: a BOM, CRLF line ends, quoted text with commas,
// doubled quotes and a line break inside a cell.
const SPREADSHEET = '\ufeffid,sepal length,"note, free text",sepal width,species\r\n' +
  '1,5.1,"plain",3.5,setosa\r\n' +
  '2,7.0,"has ""quotes"", and a comma",3.2,versicolor\r\n' +
  '3,6.3,"two\r\nlines",3.3,virginica\r\n' +
  '4,4.9,,3.0,setosa\r\n' +
  '\r\n';

describe('CSV/TSV reader', () => {
  it('splits records as RFC 4180 says', () => {
    expect(parseRecord('a,"b,c","d ""e""",,f', ',')).toEqual(['a', 'b,c', 'd "e"', '', 'f']);
    expect(parseRecord('1\t"x\ty"\t2', '\t')).toEqual(['1', 'x\ty', '2']);
    expect(parseRecord('', ',')).toEqual(['']);
  });

  it('reads a spreadsheet CSV: the last column is the label, classes sorted by name, numeric columns are features, rows read by offset', () => {
    const d = csv('iris.csv', SPREADSHEET);
    const data = openCsvTable(d.source, d, classifier(3), 1);
    expect(data.train.size).toBe(4);
    expect(data.classes.y).toEqual(['setosa', 'versicolor', 'virginica']);
    expect(data.describe).toMatch(/non-numeric columns left out: note, free text/);
    // Features id, sepal length, sepal width; then the label id.
    expect([...data.train.gather(['x', 'y'], [2, 0])]).toEqual([3, 6.3, 3.3, 2, 1, 5.1, 3.5, 0].map(Math.fround));
    expect([...data.train.gather(['y'], [1, 3])]).toEqual([1, 0]);
    data.close();
    expect(existsSync(`${d.source}.shoal-index.json`)).toBe(true);
    const again = openCsvTable(d.source, d, classifier(3), 1);
    expect(again.describe).toMatch(/index cached/);
    expect([...again.train.gather(['x'], [3])]).toEqual([4, 4.9, 3].map(Math.fround));
    again.close();
  });

  it('takes the label and the features by name, one-hot when the loss wants rows, and a seeded validation split', () => {
    const d = csv('named.csv', 'a,label,b,c\n1,0,2,3\n4,1,5,6\n7,2,8,9\n10,1,11,12\n', { outputs: [{ columns: ['label'] }], inputs: [{ columns: ['c', 'a'] }], validationSplit: 0.25 });
    const oneHot: ModelArrays = { inputs: [{ name: 'x', shape: [2], dtype: 'float32' }], targets: [{ name: 'y', shape: [3], dtype: 'float32', range: [0, 1] }] };
    const data = openCsvTable(d.source, d, oneHot, 7);
    expect(data.train.size + data.validation.size).toBe(4);
    expect(data.validation.size).toBe(1);
    const all = [...data.train.gather(['x', 'y'], [0, 1, 2]), ...data.validation.gather(['x', 'y'], [0])];
    const rows = [0, 1, 2, 3].map((r) => all.slice(r * 5, r * 5 + 5)).sort((p, q) => p[1] - q[1]);
    expect(rows).toEqual([[3, 1, 1, 0, 0], [6, 4, 0, 1, 0], [9, 7, 0, 0, 1], [12, 10, 0, 1, 0]]);
    data.close();
  });

  it('reads a TSV with numeric regression targets and normalises features', () => {
    const d = csv('t.tsv', 'x1\tx2\ttarget\n1\t10\t0.5\n3\t30\t-1.5\n', { preprocessing: { normalize: { mean: [2, 20], std: [1, 10] } } });
    const reg: ModelArrays = { inputs: [{ name: 'in', shape: [2], dtype: 'float32' }], targets: [{ name: 'out', shape: [1], dtype: 'float32' }] };
    const data = openCsvTable(d.source, d, reg, 1);
    expect([...data.train.gather(['in', 'out'], [0, 1])]).toEqual([-1, -1, 0.5, 1, 1, -1.5]);
    data.close();
  });

  it('reports bad data by row and column before anything trains', () => {
    const open = (name: string, text: string, extra: Partial<DatasetDescription> = {}, arrays = classifier(2)) => () => openCsvTable(csv(name, text, extra).source, csv(name, text, extra), arrays, 1);
    expect(open('missing.csv', 'a,b,y\n1,2,0\n3,,1\n')).toThrow(/missing\.csv row 3, column 'b': missing value/);
    expect(open('text.csv', 'a,b,y\n1,2,0\n3,x,1\n', { inputs: [{ columns: ['a', 'b'] }] })).toThrow(/text\.csv row 3, column 'b': "x" is not a number/);
    expect(open('short.csv', 'a,b,y\n1,2,0\n3,1\n')).toThrow(/short\.csv row 3: 2 fields, but the header has 3/);
    expect(open('range.csv', 'a,b,y\n1,2,0\n3,4,5\n')).toThrow(/range\.csv column 'y' row 3: label 5, but model output 'y' takes class ids 0\.\.2/);
    expect(open('classes.csv', 'a,b,y\n1,2,cat\n3,4,dog\n5,6,emu\n7,8,fox\n')).toThrow(/4 classes \("cat", "dog", "emu", "fox"\), but model output 'y' has room for 3/);
    expect(open('nocol.csv', 'a,b,y\n1,2,0\n', { outputs: [{ columns: ['label'] }] })).toThrow(/no column 'label'.*'a', 'b', 'y'/);
    expect(open('width.csv', 'a,b,c,y\n1,2,3,0\n')).toThrow(/3 feature columns \(a, b, c\) for model input 'x', which takes 2 values/);
    expect(open('quote.csv', 'a,b,y\n1,"2,0\n')).toThrow(/quoted field opened in record 2 is never closed/);
  });

  it('indexes again when the file changes', () => {
    const d = csv('change.csv', 'a,b,y\n1,2,0\n');
    openCsvTable(d.source, d, classifier(2), 1).close();
    writeFileSync(d.source, 'a,b,y\n1,2,0\n3,4,1\n5,6,2\n');
    const data = openCsvTable(d.source, d, classifier(2), 1);
    expect(data.train.size).toBe(3);
    expect(data.describe).not.toMatch(/cached/);
    data.close();
  });
});
