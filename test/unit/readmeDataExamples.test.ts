import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import type { ModelArrays } from '../../engine/data/modelArrays.js';
import { zooModel } from '../../engine/model/zoo.js';
import { dataRefFrom } from '../../engine/node/trainingOptions.js';
import type { UserDataRef } from '../../engine/wire/data/openUserData.js';
import { openUserData } from '../../engine/wire/data/openUserData.js';

/**
 * The README's "Your data" examples, run as written: each ```python block that makes data is run by
 * python3 in an empty folder, then its `# shoal train … --data X` comment is turned into the data
 * reference the CLI makes and opened by the reader a job uses, against a model of the example's
 * shapes. A block whose Python modules are not installed here (pandas, PIL) is skipped, saying so.
 * The dataset.json example is validated and opened over the table the CSV example describes.
 */
const readme = readFileSync(join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'README.md'), 'utf8');
const root = mkdtempSync(join(tmpdir(), 'shoal-readme-data-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const classifier = (shape: number[], classes: number, inputDtype = 'float32', vocabulary?: number, input = 'x', output = 'y'): ModelArrays => ({
  inputs: [{ name: input, shape, dtype: inputDtype, ...(vocabulary ? { range: [0, vocabulary - 1] as [number, number] } : {}) }],
  targets: [{ name: output, shape: [], dtype: 'int32', range: [0, classes - 1] }],
});

/** The model each example's data is for, by its --data, and the samples it must show (train + validation). */
const MODELS: Record<string, { arrays: ModelArrays; samples: number }> = {
  digits: { arrays: classifier([28, 28, 1], 10), samples: 1000 },
  'table.csv': { arrays: classifier([2], 2), samples: 2 },
  photos: { arrays: classifier([32, 32, 3], 2), samples: 2 },
  'reviews.jsonl': { arrays: classifier([4], 2, 'int32', 1000), samples: 2 },
  'data.npz': { arrays: classifier([8], 3), samples: 1000 },
};

interface Example { code: string; data: string; options: Record<string, string> }

/** Every ```python block between the data sections' start and "Losses and optimizers" that names a `shoal train --data`. */
function pythonExamples(): Example[] {
  const start = readme.indexOf('**Data.** `--data DIR`');
  const end = readme.indexOf('**Losses and optimizers.**');
  const blocks = [...readme.slice(start, end).matchAll(/```python\n([\s\S]*?)```/g)].map((m) => m[1]);
  return blocks.map((code) => {
    const command = /# shoal train (.*)/.exec(code)?.[1] ?? '';
    const options: Record<string, string> = {};
    for (const m of command.matchAll(/--([a-z-]+) (\S+)/g)) options[m[1]] = m[2];
    return { code, data: options.data, options };
  });
}

/**
 * The Python that can run a block: `python3` on PATH, else Debian's /usr/bin/python3 (where
 * scripts/setup-debian.sh installs NumPy, pandas and Pillow when a pyenv or venv python3 comes first),
 * or why neither can: the modules that `python3` lacks, or that there is no python3 at all.
 */
function pythonFor(code: string): { python: string } | { why: string } {
  const modules = [...code.matchAll(/^(?:from (\w+)|import ([\w, ]+))/gm)].flatMap((m) => (m[1] ? [m[1]] : m[2].split(',').map((s) => s.trim().split(' ')[0])));
  let why = 'python3 is not installed';
  for (const python of ['python3', '/usr/bin/python3']) {
    const probe = spawnSync(python, ['-c', 'import sys, importlib.util; print(",".join(m for m in sys.argv[1:] if importlib.util.find_spec(m) is None))', ...modules], { encoding: 'utf8' });
    if (probe.status !== 0) continue;
    const missing = probe.stdout.trim();
    if (!missing) return { python };
    if (python === 'python3') why = `python3 here lacks ${missing.split(',').join(', ')}`;
  }
  return { why };
}

function openExample(ex: Example, folder: string) {
  const values = { ...ex.options, data: join(folder, ex.data) };
  const ref = dataRefFrom(values, zooModel('mlp')) as UserDataRef;
  return openUserData(ref, MODELS[ex.data].arrays, 1);
}

const examples = pythonExamples();

describe("the README's data examples", () => {
  it('cover every format, each with a python example of five lines or so', () => {
    expect(examples.map((e) => e.data).sort()).toEqual(Object.keys(MODELS).sort());
    for (const ex of examples) expect(ex.code.trim().split('\n').length, ex.code).toBeLessThanOrEqual(7);
  });

  for (const ex of examples) {
    const found = pythonFor(ex.code);
    const why = 'why' in found ? found.why : '';
    it.skipIf(why !== '')(`--data ${ex.data}: the example's files open with the reader a job uses${why ? ` (SKIPPED: ${why})` : ''}`, () => {
      const folder = join(root, ex.data.replace(/\W/g, '_'));
      mkdirSync(folder);
      execFileSync((found as { python: string }).python, ['-c', ex.code], { cwd: folder });
      const data = openExample(ex, folder);
      expect(data.train.size + data.validation.size).toBe(MODELS[ex.data].samples);
      const { inputs, targets } = MODELS[ex.data].arrays;
      const row = data.train.gather([inputs[0].name, targets[0].name], [0]);
      expect(row.length).toBe(inputs[0].shape.reduce((a, b) => a * b, 1) + 1);
      expect(row.every(Number.isFinite)).toBe(true);
      data.close();
    });
  }

  it('the dataset.json example is valid and opens the table the CSV example writes', () => {
    const json = /\*\*dataset\.json\*\*[\s\S]*?```json\n([\s\S]*?)```/.exec(readme)![1];
    const folder = join(root, 'described');
    mkdirSync(folder);
    writeFileSync(join(folder, 'dataset.json'), json);
    // What pandas' to_csv writes for the CSV example's frame (index=False).
    writeFileSync(join(folder, 'table.csv'), 'age,height,species\n31,1.7,cat\n45,1.8,dog\n');
    const ref = dataRefFrom({ data: folder }, zooModel('mlp')) as UserDataRef;
    const data = openUserData(ref, classifier([2], 2, 'float32', undefined, 'features', 'species'), 1);
    expect(data.train.size + data.validation.size).toBe(2);
    // normalize: (31 - 40) / 12 and (1.7 - 1.75) / 0.1.
    const all = [0, 1].flatMap((i) => [...(i < data.train.size ? data.train.gather(['features'], [i]) : data.validation.gather(['features'], [i - data.train.size]))]);
    expect(all.map((v) => Math.round(v * 1000) / 1000).sort()).toEqual([-0.75, -0.5, 0.417, 0.5].sort());
    data.close();
  });
});
