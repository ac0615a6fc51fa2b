import { describe, expect, it } from 'vitest';
import { localClusterSpec, parseClusterName } from '../../engine/cluster/cluster.js';
import { ClusterSpecError, parseClusterSpec } from '../../engine/cluster/parseClusterSpec.js';
import { importKerasModel } from '../../engine/model/import/importKeras.js';
import { zooModel } from '../../engine/model/zoo.js';
import { DiagnosticError, Findings, formatDiagnostics, type Diagnostic } from '../../engine/plan/diagnostics.js';
import { LIMITS } from '../../engine/plan/limits.js';
import { parsePlan, PlanError } from '../../engine/plan/plan.js';
import { presetPlan } from '../../engine/plan/presets.js';
import { validatePlan } from '../../engine/plan/validate.js';
import { closestName } from '../../engine/plan/unknownFields.js';
import { dense, functional, nestedTwice, nestedChain, sequential } from '../support/kerasDocs.js';

/** Every input is bounded before work proportional to it, and every refusal is coded. */
const mlp = zooModel('mlp');
const valid = () => JSON.parse(JSON.stringify(presetPlan(mlp, 'pp2-dp2'))) as Record<string, unknown> & { stages: Record<string, unknown>[] };

function planCodes(input: unknown): Diagnostic[] {
  try {
    parsePlan(input);
  } catch (err) {
    expect(err).toBeInstanceOf(PlanError);
    return (err as PlanError).diagnostics;
  }
  throw new Error('the plan was accepted');
}

describe('plan limits', () => {
  it('refuses dataParallel 2^31 without placing a rank', () => {
    const plan = valid();
    plan.stages[0].dataParallel = 2 ** 31;
    const found = planCodes(plan);
    expect(found.map((d) => d.code)).toEqual(['plan-too-large']);
    expect(found[0].message).toMatch(/agents/);
  });

  it('refuses 1.45 million stages with one diagnostic, not one per stage', () => {
    const plan = valid();
    plan.stages = new Array(1_450_000).fill({ layers: ['x'], dataParallel: 1 });
    const found = planCodes(plan);
    expect(found).toHaveLength(1);
    expect(found[0]).toMatchObject({ code: 'plan-too-large', where: { field: 'stages' } });
  });

  it('a plan built in code with too many ranks is refused by validatePlan before placements', () => {
    const plan = presetPlan(mlp, 'pp1-dp1');
    plan.stages[0].dataParallel = 2 ** 31;
    expect(validatePlan(plan, mlp).map((d) => d.code)).toContain('too-many-agents');
  });

  it('names an unknown field and suggests the known one it most likely means', () => {
    const plan: ReturnType<typeof valid> = { ...valid(), gradientClipnorm: 1 };
    plan.stages[1] = { ...plan.stages[1], dataparallel: 2 };
    (plan.optimizer as Record<string, unknown>).learningrate = 0.1;
    const found = planCodes(plan);
    expect(found.map((d) => [d.code, d.where.field])).toEqual([
      ['plan-unknown-field', 'stages[1].dataparallel'],
      ['plan-unknown-field', 'optimizer.learningrate'],
      ['plan-unknown-field', 'gradientClipnorm'],
    ]);
    expect(found[2].message).toContain('did you mean gradientClipNorm?');
    expect(found[0].message).toContain('did you mean dataParallel?');
    expect(planCodes({ ...valid(), colour: 'red' })[0].message).not.toContain('did you mean');
    expect(planCodes({ ...valid(), sharding: { dense_1: { wieght: 'S(1)' } } })[0].message).toBe('Unknown field "wieght" at sharding.dense_1.wieght (did you mean weight?).');
  });

  it('says what is wrong with 1e400 (Infinity) instead of "expected number, received number"', () => {
    const found = planCodes({ ...valid(), globalBatch: JSON.parse('1e400') });
    expect(found[0].message).toMatch(/globalBatch: Infinity is not a finite number/);
  });

  it('closestName: case, one typo, nothing for a different word', () => {
    expect(closestName('GLOBALBATCH', ['globalBatch', 'seed'])).toBe('globalBatch');
    expect(closestName('microBatchs', ['globalBatch', 'microBatches'])).toBe('microBatches');
    expect(closestName('colour', ['globalBatch', 'seed', 'zero'])).toBeUndefined();
  });

  it('preset plans are bounded before the stage search', () => {
    expect(() => presetPlan(mlp, 'pp2-dp99999')).toThrow(/at most 1024/);
  });
});

describe('diagnostics are capped', () => {
  it('Findings keeps the first ones and counts the rest, the count staying an error', () => {
    const findings = new Findings(3);
    for (let i = 0; i < 10; i++) findings.error('x', `problem ${i}.`, {}, 'Fix it.');
    expect(findings.list).toHaveLength(4);
    expect(findings.list[3]).toMatchObject({ severity: 'error', code: 'more-diagnostics' });
    expect(findings.list[3].message).toMatch(/^7 errors more/);
  });

  it('formatDiagnostics prints 20 and one line counting the rest, errors first', () => {
    const many: Diagnostic[] = Array.from({ length: 1000 }, (_, i) => ({ severity: i % 2 ? 'error' : 'warning', code: 'c', message: `m${i}.`, where: {}, hint: 'H.' }));
    const lines = formatDiagnostics(many).split('\n');
    expect(lines).toHaveLength(LIMITS.diagnosticsShown + 1);
    expect(lines.slice(0, 20).every((l) => l.startsWith('error'))).toBe(true);
    expect(lines[20]).toBe('… and 980 more (480 errors, 500 warnings) not shown.');
  });
});

describe('cluster limits', () => {
  const spec = (count: unknown, hosts = 1) => ({
    name: 'big',
    hosts: Array.from({ length: hosts }, (_, h) => ({ name: `h${h}`, devices: [{ preset: 'v100-16gb', count }] })),
    links: { intraHost: { alpha: 1e-5, beta: 1e10 }, interHost: { alpha: 1e-5, beta: 1e9 } },
  });
  const codes = (input: unknown) => {
    try {
      parseClusterSpec(input);
    } catch (err) {
      expect(err).toBeInstanceOf(ClusterSpecError);
      return (err as ClusterSpecError).problems.map((p) => p.code);
    }
    throw new Error('accepted');
  };

  it.each([10_000, 1e6, 1e9])('refuses a device count of %d before expanding it', (count) => {
    expect(codes(spec(count))).toEqual(['cluster-too-large']);
  });

  it('refuses counts that are each fine but sum past the limit', () => {
    expect(codes(spec(1000, 2))).toEqual(['cluster-too-large']);
    expect(parseClusterSpec(spec(512, 2)).devices).toHaveLength(LIMITS.devices);
  });

  it('refuses 100,000 hosts with one problem', () => {
    expect(codes(spec(1, 100_000))).toEqual(['cluster-too-large']);
  });

  it('every rule has a code', () => {
    expect(codes({ name: 'x', hosts: [{ name: 'a', devices: [{ preset: 'nope' }] }, { name: 'a', devices: [{ preset: 'v100-16gb' }] }] })).toEqual(['unknown-preset', 'duplicate-host', 'missing-link']);
  });

  it('local:N is capped, with an override', () => {
    expect(() => parseClusterName('local:1000', 2)).toThrow(/limit is 64[\s\S]*SHOAL_MAX_LOCAL_AGENTS/);
    expect(parseClusterName('local:100', 2, 128).agents).toBe(100);
    expect(() => parseClusterName('local:0', 2)).toThrow(/at least 1/);
    expect(localClusterSpec(3).devices).toHaveLength(3);
  });
});

describe('model limits', () => {
  const codes = (doc: unknown) => importKerasModel(doc).diagnostics.filter((d) => d.severity === 'error').map((d) => d.code);

  it('a 4 KB model of nested sub-models doubling 16 times stops at the layer budget', () => {
    const doc = nestedTwice(16);
    expect(JSON.stringify(doc).length).toBeLessThan(8000);
    const { graph, diagnostics } = importKerasModel(doc);
    expect(diagnostics.filter((d) => d.code === 'model-too-large')).toHaveLength(1);
    expect(graph.layers.length).toBeLessThanOrEqual(LIMITS.layers + 1);
  });

  it('a model nested 20,000 deep is refused at the nesting limit, not by a stack overflow', () => {
    expect(codes(nestedChain(20_000))).toContain('model-too-deep');
    expect(codes(nestedChain(10))).toEqual([]);
  });

  it('zero and negative sizes, and empty models, have their own errors', () => {
    expect(codes(sequential([dense('a', -3, [8])]))).toEqual(['invalid-layer-size']);
    expect(codes(sequential([dense('a', 4, [8]), dense('b', 0)]))).toEqual(['invalid-layer-size']);
    expect(codes(sequential([]))).toEqual(['empty-model']);
  });

  it('a document that is no model is a coded rejection', () => {
    try {
      importKerasModel({ hello: 1 });
      throw new Error('accepted');
    } catch (err) {
      expect(err).toBeInstanceOf(DiagnosticError);
      expect((err as DiagnosticError).diagnostics[0].code).toBe('not-a-model');
    }
  });

  it('a functional config listed backwards imports as forwards, in linear time', () => {
    const n = 5000;
    const layers = Array.from({ length: n }, (_, i) => ({ name: `d${i}`, inbound: i === 0 ? 'in' : `d${i - 1}`, units: 4 }));
    const forwards = importKerasModel(functional(layers, `d${n - 1}`));
    const backwards = importKerasModel(functional([...layers].reverse(), `d${n - 1}`));
    expect(backwards.diagnostics).toEqual([]);
    expect(backwards.graph.layers.map((l) => l.id)).toEqual(forwards.graph.layers.map((l) => l.id));
  });
});
