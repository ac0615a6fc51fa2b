import { describe, expect, it } from 'vitest';
import { zooModel } from '../../engine/model/zoo.js';
import { presetPlan } from '../../engine/plan/presets.js';
import { parseProject, PROJECT_VERSION, type Project } from '../../engine/protocol/project.js';
import { choiceFromRef, dataForModel, dataRefOf, DEFAULT_DATA } from '../../renderer/src/store/dataChoice';

/** The plan panel's Data section: what Train sends, each model's default, and what a project keeps. */
describe('data choice', () => {
  it('turns the section into the data reference a training request carries, or says what is missing', () => {
    expect(dataRefOf(DEFAULT_DATA)).toEqual({ ref: { kind: 'mnist' } });
    expect(dataRefOf({ ...DEFAULT_DATA, kind: 'synthetic', samples: 400 })).toEqual({ ref: { kind: 'synthetic', samples: 400, validation: 100 } });
    expect(dataRefOf({ ...DEFAULT_DATA, kind: 'npy', dir: '  ' })).toEqual({ why: expect.stringMatching(/Choose the data/) });
    expect(dataRefOf({ ...DEFAULT_DATA, kind: 'npy', dir: 'data' })).toEqual({ why: expect.stringMatching(/full path/) });
    expect(dataRefOf({ ...DEFAULT_DATA, kind: 'npy', dir: '/d ', validationSplit: 0.25 })).toEqual({ ref: { kind: 'npy', dir: '/d', validationSplit: 0.25 } });
    expect(dataRefOf({ ...DEFAULT_DATA, kind: 'npy', dir: '~/d', validationSplit: 0 })).toEqual({ ref: { kind: 'npy', dir: '~/d' } });
  });

  it('starts a built-in model on MNIST and a model file on a NumPy folder, keeping the typed path', () => {
    const mlp = zooModel('mlp');
    const file = { ...mlp, numClasses: undefined, source: { modelFile: '/m/model.json' } };
    const typed = { ...DEFAULT_DATA, kind: 'npy' as const, dir: '/data', loss: 'mse' };
    expect(dataForModel(typed, mlp)).toEqual({ ...typed, kind: 'mnist', loss: '' });
    expect(dataForModel({ ...typed, kind: 'mnist' }, file)).toEqual(typed);
    expect(dataForModel({ ...typed, kind: 'synthetic' }, file).kind).toBe('synthetic');
  });

  it('is kept in a project and read back', () => {
    const project: Project = {
      format: 'shoal-project',
      version: PROJECT_VERSION,
      name: 'p',
      savedAt: '2026-11-29T12:00:00.000Z',
      model: { kind: 'zoo', name: 'mlp' },
      plan: presetPlan(zooModel('mlp'), 'pp1-dp1'),
      cluster: { kind: 'builtin', name: 'local', agents: 2 },
      training: { epochs: 2, data: { kind: 'npy', dir: '/data', validationSplit: 0.1 }, loss: 'mae' },
    };
    const parsed = parseProject(JSON.stringify(project));
    if (!parsed.ok) throw new Error(parsed.problem);
    expect(choiceFromRef(DEFAULT_DATA, parsed.project.training?.data, parsed.project.training?.loss)).toEqual({ ...DEFAULT_DATA, kind: 'npy', dir: '/data', validationSplit: 0.1, loss: 'mae' });
    expect(choiceFromRef(DEFAULT_DATA, { kind: 'synthetic', samples: 50, validation: 12 }, undefined)).toMatchObject({ kind: 'synthetic', samples: 50, loss: '' });
    expect(parseProject(JSON.stringify({ ...project, training: { epochs: 2, data: { kind: 'npy', dir: '' } } }))).toMatchObject({ ok: false, problem: expect.stringMatching(/training\.data\.dir/) });
  });
});
