import { describe, expect, it } from 'vitest';
import { zooModel } from '../../engine/model/zoo.js';
import { presetPlan } from '../../engine/plan/presets.js';
import { parseProject, PROJECT_VERSION, projectFileName, type Project } from '../../engine/protocol/project.js';

const project: Project = {
  format: 'shoal-project',
  version: PROJECT_VERSION,
  name: 'mnist pipeline',
  savedAt: '2026-11-29T12:00:00.000Z',
  model: { kind: 'zoo', name: 'mlp' },
  plan: presetPlan(zooModel('mlp'), 'pp2-dp2'),
  planSource: 'pp2-dp2',
  planEdited: true,
  cluster: { kind: 'builtin', name: 'local', agents: 4 },
  training: { epochs: 3 },
};

describe('.shoal.json projects', () => {
  it('round-trips a project with a zoo model', () => {
    const parsed = parseProject(JSON.stringify(project));
    expect(parsed).toMatchObject({ ok: true, project: { name: 'mnist pipeline', cluster: { agents: 4 } } });
    expect(parsed.ok && parsed.project.plan?.stages).toHaveLength(2);
  });

  it('carries an imported model graph so it opens without the original file', () => {
    const graph = zooModel('cnn');
    const parsed = parseProject(JSON.stringify({ ...project, model: { kind: 'file', fileName: 'cnn.json', graph } }));
    expect(parsed.ok && parsed.graph?.layers.map((l) => l.id)).toEqual(graph.layers.map((l) => l.id));
  });

  it('says what is wrong and where', () => {
    expect(parseProject('{', 'a.shoal.json')).toMatchObject({ ok: false, problem: expect.stringMatching(/^a\.shoal\.json is not valid JSON/) });
    expect(parseProject('{"modelTopology": {}}', 'model.json')).toMatchObject({ ok: false, problem: expect.stringMatching(/not a Shoal project.*Open model/) });
    expect(parseProject(JSON.stringify({ ...project, version: PROJECT_VERSION + 1 }))).toMatchObject({ ok: false, problem: expect.stringMatching(new RegExp(`is a Shoal project of version ${PROJECT_VERSION + 1}; this Shoal reads versions up to ${PROJECT_VERSION}\\. .*update Shoal`)) });
    const badPlan = { ...project, plan: { ...project.plan, globalBatch: -1 } };
    expect(parseProject(JSON.stringify(badPlan), 'p.shoal.json')).toMatchObject({ ok: false, problem: expect.stringMatching(/^p\.shoal\.json is not a valid Shoal project: plan\.globalBatch/) });
  });

  it('names files safely', () => {
    expect(projectFileName('my/plan: v2')).toBe('my-plan- v2.shoal.json');
    expect(projectFileName('x.shoal.json')).toBe('x.shoal.json');
    expect(projectFileName('///')).toBe('-.shoal.json');
  });
});
