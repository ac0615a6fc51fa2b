import { describe, expect, it } from 'vitest';
import { zooModel } from '../../engine/model/zoo.js';
import { presetPlan } from '../../engine/plan/presets.js';
import type { DatasetInspection } from '../../engine/protocol/datasetInspect.js';
import { parseProject, PROJECT_VERSION, type Project } from '../../engine/protocol/project.js';
import type { DataRef } from '../../engine/protocol/trainingSetup.js';
import { choiceFromRef, datasetChoiceOf, dataRefOf, DEFAULT_DATA, DEFAULT_DATASET, inspectionKey, type DataChoice } from '../../renderer/src/store/dataChoice';

/** The Data section's "Dataset (file or folder)": what it asks the Node side, when Train may go, what a project keeps. */
const ref: DataRef = { kind: 'dataset', dataset: { format: 'csv', source: '/d/flowers.csv', inputs: [{ columns: ['a', 'b'] }], outputs: [{ columns: ['species'] }], validationSplit: 0.25 } };
const typed: DataChoice = { ...DEFAULT_DATA, kind: 'dataset', validationSplit: 0.25, loss: 'mae', dataset: { ...DEFAULT_DATASET, source: ' /d/flowers.csv ', labelColumn: 'species', featureColumns: 'a, b,' } };
const inspection = (diagnostics: DatasetInspection['diagnostics'] = []): DatasetInspection => ({ source: '/d/flowers.csv', format: 'csv', ref, feeds: [], classes: [], samples: { kind: 'none' }, diagnostics });

describe('dataset choice', () => {
  it('asks the Node side with the fields as typed, trimmed, empty ones left out', () => {
    expect(datasetChoiceOf(typed)).toEqual({ choice: { source: '/d/flowers.csv', labelColumn: 'species', featureColumns: ['a', 'b'], validationSplit: 0.25 } });
    expect(datasetChoiceOf({ ...typed, validationSplit: 0, dataset: { ...DEFAULT_DATASET, source: '/i', format: 'images', pixels: 'byte', imageSize: [32, 0] } })).toEqual({ choice: { source: '/i', format: 'images', pixels: 'byte' } });
    expect(datasetChoiceOf({ ...typed, dataset: { ...DEFAULT_DATASET, source: '/i', imageSize: [32, 24] } })).toMatchObject({ choice: { imageSize: [32, 24] } });
    expect(dataRefOf({ ...typed, dataset: DEFAULT_DATASET })).toEqual({ why: expect.stringMatching(/Choose the data/) });
  });

  it('trains only on an inspection of the fields as they are now, without errors, with the reference it resolved', () => {
    const fields = datasetChoiceOf(typed);
    if (!('choice' in fields)) throw new Error(fields.why);
    const key = inspectionKey(fields.choice, 'mae', '/models/m/model.json');
    expect(dataRefOf(typed)).toEqual({ why: 'Inspecting the data…' });
    expect(dataRefOf({ ...typed, inspected: { key, inspection: inspection() } })).toEqual({ ref });
    // Edited since: the answer is of other fields.
    expect(dataRefOf({ ...typed, dataset: { ...typed.dataset, labelColumn: 'x' }, inspected: { key, inspection: inspection() } })).toEqual({ why: 'Inspecting the data…' });
    expect(dataRefOf({ ...typed, loss: 'mse', inspected: { key, inspection: inspection() } })).toEqual({ why: 'Inspecting the data…' });
    const error = { severity: 'error' as const, code: 'dataset-reader', message: "no column 'x'", hint: 'h', where: { field: 'labelColumn' } };
    expect(dataRefOf({ ...typed, inspected: { key, inspection: inspection([error]) } })).toEqual({ why: "Data: no column 'x'" });
    expect(dataRefOf({ ...typed, inspected: { key, error: 'Not connected' } })).toEqual({ why: 'Could not inspect the data: Not connected' });
  });

  it('is kept in a project and read back into the same fields', () => {
    const project: Project = {
      format: 'shoal-project', version: PROJECT_VERSION, name: 'p', savedAt: '2026-12-02T03:00:00.000Z',
      model: { kind: 'zoo', name: 'mlp' }, plan: presetPlan(zooModel('mlp'), 'pp1-dp1'), cluster: { kind: 'builtin', name: 'local', agents: 2 },
      training: { epochs: 1, data: ref, loss: 'mae' },
    };
    const parsed = parseProject(JSON.stringify(project));
    if (!parsed.ok) throw new Error(parsed.problem);
    const back = choiceFromRef(DEFAULT_DATA, parsed.project.training?.data, parsed.project.training?.loss);
    expect(back).toEqual({ ...DEFAULT_DATA, kind: 'dataset', validationSplit: 0.25, loss: 'mae', dataset: { ...DEFAULT_DATASET, source: '/d/flowers.csv', format: 'csv', labelColumn: 'species', featureColumns: 'a, b' }, inspected: undefined });
    expect(datasetChoiceOf(back)).toEqual({ choice: { source: '/d/flowers.csv', format: 'csv', labelColumn: 'species', featureColumns: ['a', 'b'], validationSplit: 0.25 } });
    // From a dataset.json: the path names the file, which is read again.
    const described = choiceFromRef(DEFAULT_DATA, { ...ref, file: '/d/dataset.json' }, undefined);
    expect(described.dataset).toEqual({ ...DEFAULT_DATASET, source: '/d/dataset.json' });
    const images = choiceFromRef(DEFAULT_DATA, { kind: 'dataset', dataset: { format: 'images', source: '/i', preprocessing: { pixels: 'byte', imageSize: [32, 24] } } }, undefined);
    expect(images.dataset).toEqual({ ...DEFAULT_DATASET, source: '/i', format: 'images', pixels: 'byte', imageSize: [32, 24] });
    expect(images.validationSplit).toBe(0);
  });
});
