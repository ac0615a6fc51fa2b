import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ClusterSpecError, parseClusterSpec } from '../../engine/cluster/parseClusterSpec.js';
import type { ClusterSpec } from '../../engine/cluster/spec.js';
import { kerasTopology } from '../../engine/model/export/kerasTopology.js';
import { importKerasModel } from '../../engine/model/import/importKeras.js';
import { zooModel } from '../../engine/model/zoo.js';
import { DiagnosticError, type Diagnostic } from '../../engine/plan/diagnostics.js';
import { executionSupport } from '../../engine/plan/executionSupport.js';
import { parsePlan } from '../../engine/plan/plan.js';
import { presetPlan } from '../../engine/plan/presets.js';
import { validatePlan } from '../../engine/plan/validate.js';
import { functional, nestedTwice } from '../support/kerasDocs.js';
import { mulberry32 } from '../../engine/util/prng.js';

/**
 * A hostile user, automated: seeded random and structured mutations of valid plans, cluster
 * specs and model files go through the same parsers and validators the CLI and studio use. Every case
 * must end in a result or a coded rejection — no crash, no other exception — within a budget of work
 * far above normal: each case takes milliseconds of CPU; the bounds are the 2 s (of CPU time, so
 * that waiting for a core on a loaded machine does not count) and 300 MB of heap growth.
 */
const CASES = 10_000;
const CASE_MS = 2000;
const CASE_BYTES = 300 * 2 ** 20;

type Rand = () => number;
const pick = <T,>(r: Rand, list: readonly T[]): T => list[Math.floor(r() * list.length)];
const clone = <T,>(v: T): T => JSON.parse(JSON.stringify(v)) as T;

function deepList(depth: number): unknown {
  let v: unknown = 1;
  for (let i = 0; i < depth; i++) v = [v];
  return v;
}

/** Values a hostile or careless file holds where a number, string, list or object should be. */
const NASTY = (r: Rand): unknown =>
  pick(r, [
    () => 2 ** 31,
    () => 2 ** 53 + 1,
    () => 1e9,
    () => 1e308,
    () => Infinity,
    () => -Infinity,
    () => NaN,
    () => -5,
    () => 0,
    () => 1.5,
    () => -0.0001,
    () => 'abc',
    () => '',
    () => 'S(99)',
    () => null,
    () => true,
    () => [],
    () => ({}),
    () => ({ __proto__: { x: 1 }, constructor: 1 }),
    () => deepList(2000 + Math.floor(r() * 20_000)),
    () => new Array(50_000).fill(1),
    () => 'x'.repeat(100_000),
  ])();

/** Every [container, key] in a JSON value, for picking where to mutate. */
function slots(value: unknown, out: [Record<string | number, unknown>, string | number][] = [], depth = 0): typeof out {
  if (depth > 12 || typeof value !== 'object' || value === null) return out;
  for (const key of Object.keys(value)) {
    out.push([value as Record<string, unknown>, Array.isArray(value) ? Number(key) : key]);
    slots((value as Record<string, unknown>)[key], out, depth + 1);
  }
  return out;
}

/** One random edit: replace, delete, misspell or add a field, or repeat a list's elements. */
function mutate(r: Rand, doc: unknown): unknown {
  const copy = clone(doc);
  const places = slots(copy);
  const edits = 1 + Math.floor(r() * 3);
  for (let e = 0; e < edits && places.length; e++) {
    const [container, key] = pick(r, places);
    const value = container[key];
    const kind = r();
    if (kind < 0.45) container[key] = NASTY(r);
    else if (kind < 0.55) delete container[key];
    else if (kind < 0.7 && typeof key === 'string') {
      const i = Math.floor(r() * key.length);
      container[key.slice(0, i) + key.slice(i + 1)] = value;
      delete container[key];
    } else if (kind < 0.8) container[`extra${Math.floor(r() * 3)}`] = NASTY(r);
    else if (Array.isArray(value) && value.length) container[key] = Array.from({ length: pick(r, [2, 100, 3000, 30_000]) }, (_, i) => value[i % value.length]);
    else if (typeof value === 'number') container[key] = value * pick(r, [-1, 0, 1e6, 2 ** 31, 1e300]);
    else container[key] = NASTY(r);
  }
  return copy;
}

const mlp = zooModel('mlp');
const cnn = zooModel('cnn');
const clusters = ['dgx-a100-2x8.json', 'hetero-v100-t4.json', 'local-4.json', 'whale-64xv100.json'].map((f) => JSON.parse(readFileSync(join(__dirname, '..', '..', 'examples', 'clusters', f), 'utf8')) as unknown);
const cluster16 = parseClusterSpec(clusters[0]);
const plans = [presetPlan(mlp, 'pp2-dp2'), presetPlan(mlp, 'pp1-dp2-tp2'), { ...presetPlan(cnn, 'pp2-dp1'), virtualNodes: { total: 4, perReplica: [4] } }, presetPlan(mlp, 'pp4-dp1')];
const models: unknown[] = [
  { modelTopology: kerasTopology(mlp, 'fuzz').topology },
  { modelTopology: kerasTopology(cnn, 'fuzz').topology },
  functional([{ name: 'a', inbound: 'in', units: 8 }, { name: 'b', inbound: 'a', units: 4 }, { name: 'c', inbound: 'b', units: 2 }], 'c'),
  nestedTwice(3),
];

/** Structured attacks: the shapes a hostile user tries, at random sizes. */
function structuredPlan(r: Rand): unknown {
  const plan = clone(pick(r, plans)) as Record<string, unknown> & { stages: Record<string, unknown>[] };
  const attack = Math.floor(r() * 5);
  if (attack === 0) plan.stages[0].dataParallel = pick(r, [2 ** 31, 1e6, 1025, 1024, 3]);
  else if (attack === 1) plan.stages = new Array(pick(r, [1025, 10_000, 1_450_000])).fill({ layers: ['dense_1'], dataParallel: 1 });
  else if (attack === 2) plan.stages.forEach((s) => (s.tensorParallel = pick(r, [64, 1024, 2 ** 20])));
  else if (attack === 3) plan.microBatches = pick(r, [65_537, 2 ** 31, 1e9]);
  else plan.virtualNodes = { total: pick(r, [1e6, 2 ** 31]), perReplica: new Array(pick(r, [10, 5000])).fill(1) };
  return plan;
}

function structuredCluster(r: Rand): unknown {
  const count = pick(r, [10_000, 1e6, 1e9, 1024, 2 ** 31]);
  const hosts = pick(r, [1, 2, 50, 5000]);
  return { name: 'x', hosts: Array.from({ length: hosts }, (_, h) => ({ name: `h${h}`, devices: [{ preset: 'cpu-core', count }] })), links: { intraHost: { alpha: 1e-5, beta: 1e9 }, interHost: { alpha: 1e-5, beta: 1e9 } } };
}

function structuredModel(r: Rand): unknown {
  return pick(r, [() => nestedTwice(pick(r, [3, 6, 9, 11, 12, 13, 15])), () => ({ modelTopology: { class_name: 'Sequential', config: { layers: deepList(5000) } } })])();
}

const coded = (d: Diagnostic) => typeof d.code === 'string' && /^[a-z][a-z0-9-]+$/.test(d.code) && d.message.length > 0;

/** Runs one case: a result, or a rejection whose every finding has a code. Anything else fails. */
function runCase(kind: 'plan' | 'cluster' | 'model', input: unknown): 'accepted' | 'rejected' {
  try {
    if (kind === 'plan') {
      const plan = parsePlan(input);
      const model = plan.model === 'cnn' ? cnn : mlp;
      const found = [...validatePlan(plan, model, cluster16), ...executionSupport(plan, model)];
      expect(found.every(coded)).toBe(true);
      return found.some((d) => d.severity === 'error') ? 'rejected' : 'accepted';
    }
    if (kind === 'cluster') {
      const spec: ClusterSpec = parseClusterSpec(input);
      expect(spec.devices.length).toBeLessThanOrEqual(1024);
      return 'accepted';
    }
    const { graph, diagnostics } = importKerasModel(input);
    expect(diagnostics.every(coded)).toBe(true);
    expect(graph.layers.length).toBeLessThanOrEqual(20_001);
    return diagnostics.some((d) => d.severity === 'error') ? 'rejected' : 'accepted';
  } catch (err) {
    if (err instanceof ClusterSpecError) {
      expect(err.problems.length).toBeGreaterThan(0);
      expect(err.problems.every((p) => /^[a-z][a-z0-9-]+$/.test(p.code))).toBe(true);
      return 'rejected';
    }
    if (err instanceof DiagnosticError) {
      expect(err.diagnostics.length).toBeGreaterThan(0);
      expect(err.diagnostics.every(coded)).toBe(true);
      return 'rejected';
    }
    throw new Error(`${kind} case threw ${(err as Error).name}: ${(err as Error).message.slice(0, 300)}\n${(err as Error).stack?.split('\n').slice(1, 4).join('\n')}`);
  }
}

describe('fuzzing plans, cluster specs and model files', () => {
  it(`${CASES} seeded cases: no crash, no uncaught exception, every rejection coded, each within 2 s and 300 MB`, () => {
    const r = mulberry32(17);
    const tally = { accepted: 0, rejected: 0 };
    let slowest = 0;
    let heaviest = 0;
    for (let c = 0; c < CASES; c++) {
      const kind = pick(r, ['plan', 'cluster', 'model'] as const);
      const structured = r() < 0.05;
      const input =
        kind === 'plan' ? (structured ? structuredPlan(r) : mutate(r, pick(r, plans))) : kind === 'cluster' ? (structured ? structuredCluster(r) : mutate(r, pick(r, clusters))) : structured ? structuredModel(r) : mutate(r, pick(r, models));
      const heapBefore = process.memoryUsage().heapUsed;
      // CPU time, not wall time: on a loaded machine a case waits for a core, which is not its work.
      const started = process.cpuUsage();
      let outcome: 'accepted' | 'rejected';
      try {
        outcome = runCase(kind, input);
      } catch (err) {
        throw new Error(`case ${c} (${kind}${structured ? ', structured' : ''}): ${(err as Error).message}`);
      }
      const used = process.cpuUsage(started);
      slowest = Math.max(slowest, (used.user + used.system) / 1000);
      heaviest = Math.max(heaviest, process.memoryUsage().heapUsed - heapBefore);
      tally[outcome]++;
    }
    // Budgets, not timings: a bounded case takes milliseconds, so only a runaway one comes near them.
    expect(slowest).toBeLessThan(CASE_MS);
    expect(heaviest).toBeLessThan(CASE_BYTES);
    // Both outcomes occur: the mutations neither all break nor all miss the validators.
    expect(tally.accepted).toBeGreaterThan(CASES / 50);
    expect(tally.rejected).toBeGreaterThan(CASES / 4);
  }, 180_000);
});
