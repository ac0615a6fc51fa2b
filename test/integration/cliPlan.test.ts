import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseClusterSpec } from '../../engine/cluster/parseClusterSpec.js';
import { importKerasModel } from '../../engine/model/import/importKeras.js';
import { zooModel } from '../../engine/model/zoo.js';
import { hasErrors } from '../../engine/plan/diagnostics.js';
import { parsePlan } from '../../engine/plan/plan.js';
import { validatePlan } from '../../engine/plan/validate.js';

const root = join(__dirname, '..', '..');
const whalePath = join(root, 'examples/clusters/whale-64xv100.json');
const scratch = mkdtempSync(join(tmpdir(), 'shoal-plan-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** The built CLI (vitest's globalSetup builds dist/ first), as a user runs it. */
function shoal(args: string[], env: NodeJS.ProcessEnv = process.env) {
  return spawnSync(process.execPath, [join(root, 'bin/shoal.cjs'), 'plan', ...args], { cwd: root, encoding: 'utf8', timeout: 120_000, env });
}

interface Output {
  searchMs: number;
  suggestions: Array<{ plan: unknown; rationale: string; predicted: { stepTimeMs: number; bubbleFraction: number; peakMemoryBytes: number[]; commBytesPerStep: number } }>;
}

function parseOutput(stdout: string): Output {
  const lines = stdout.trim().split('\n');
  expect(lines).toHaveLength(1);
  return JSON.parse(lines[0]) as Output;
}

describe('npx shoal plan', () => {
  it("resnet50-100k on Whale's cluster: one JSON object, the 100k-class layer sharded first", () => {
    const run = shoal(['--model', 'resnet50-100k', '--cluster', whalePath, '--top', '3', '--json']);
    expect(run.status, run.stderr).toBe(0);
    const out = parseOutput(run.stdout);
    expect(out.searchMs).toBeGreaterThan(0);
    expect(out.suggestions.length).toBeGreaterThanOrEqual(1);
    expect(out.suggestions.length).toBeLessThanOrEqual(3);
    const model = zooModel('resnet50-100k');
    const cluster = parseClusterSpec(JSON.parse(readFileSync(whalePath, 'utf8')));
    for (const s of out.suggestions) {
      const plan = parsePlan(s.plan);
      expect(hasErrors(validatePlan(plan, model, cluster))).toBe(false);
      expect(s.predicted.peakMemoryBytes).toHaveLength(64);
      expect(s.predicted.stepTimeMs).toBeGreaterThan(0);
      expect(s.predicted.bubbleFraction).toBeGreaterThanOrEqual(0);
      expect(s.predicted.commBytesPerStep).toBeGreaterThan(0);
      expect(typeof s.rationale).toBe('string');
    }
    expect(parsePlan(out.suggestions[0].plan).sharding.predictions?.weight).toBe('S(1)');
    expect(out.suggestions[0].rationale).toMatch(/100k-class/);
  });

  it('--exhaustive --global-batch on a local cluster, and a readable table without --json', () => {
    const exhaustive = shoal(['--model', 'mlp', '--cluster', 'local:4', '--global-batch', '64', '--exhaustive', '--top', '1', '--json']);
    expect(exhaustive.status, exhaustive.stderr).toBe(0);
    const best = parseOutput(exhaustive.stdout).suggestions[0];
    expect(parsePlan(best.plan).globalBatch).toBe(64);
    const table = shoal(['--model', 'mlp', '--cluster', 'local:4', '--global-batch', '64']);
    expect(table.status, table.stderr).toBe(0);
    expect(table.stdout).toMatch(/step ms/);
    expect(table.stdout).toMatch(/^1 /m);
  });

  it('plans a Keras model file, showing its import diagnostics on stderr', () => {
    const doc = {
      class_name: 'Sequential',
      config: {
        name: 'small_net',
        layers: [
          { class_name: 'Dense', config: { name: 'hidden', units: 256, activation: 'relu', batch_input_shape: [null, 128] } },
          { class_name: 'FancyNorm', config: { name: 'fancy' } },
          { class_name: 'Dense', config: { name: 'out', units: 10, activation: 'softmax' } },
        ],
      },
    };
    const file = join(scratch, 'small_net.json');
    writeFileSync(file, JSON.stringify(doc));
    const run = shoal(['--model', file, '--cluster', 'local:2', '--json']);
    expect(run.status, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/FancyNorm/);
    const out = parseOutput(run.stdout);
    const model = importKerasModel(doc).graph;
    expect(parsePlan(out.suggestions[0].plan).model).toBe(model.name);
  });

  it('bad inputs: one readable message and exit code 1', () => {
    const badCluster = join(scratch, 'bad-cluster.json');
    writeFileSync(badCluster, JSON.stringify({ name: 'x', hosts: [{ name: 'a', devices: [{ preset: 'v999', count: 2 }] }] }));
    const notJson = join(scratch, 'broken.json');
    writeFileSync(notJson, '{ "class_name": ');
    const cases: Array<[string[], RegExp]> = [
      [['--model', 'resnet9000', '--cluster', 'local:2'], /Unknown model "resnet9000"/],
      [['--model', 'mlp', '--cluster', join(scratch, 'missing.json')], /The cluster file .*missing\.json does not exist/],
      [['--model', 'mlp', '--cluster', badCluster], /Unknown device preset "v999"/],
      [['--model', notJson, '--cluster', 'local:2'], /Model file .*broken\.json is not valid JSON/],
      [['--model', 'mlp', '--cluster', 'local:2', '--top', 'three'], /--top "three": not a number; expected a whole number at least 1/],
      [['--model', 'mlp'], /--cluster is required/],
      [['--model', 'gpt2-xl', '--cluster', 'local:2'], /No plan for "gpt2-xl" fits in memory/],
    ];
    for (const [args, message] of cases) {
      const run = shoal(args);
      expect(run.status, `${args.join(' ')}: ${run.stderr}`).toBe(1);
      expect(run.stderr).toMatch(message);
      expect(run.stderr).not.toMatch(/\n\s+at /); // no stack trace
      expect(run.stdout).toBe('');
    }
    // A usage error (an option plan does not have) exits 2, as on every subcommand.
    const unknown = shoal(['--model', 'mlp', '--cluster', 'local:2', '--frobnicate']);
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toMatch(/--frobnicate/);
  });

  it('still prints and checks a preset plan with --plan', () => {
    const run = shoal(['--model', 'mlp', '--plan', 'pp2-dp2', '--cluster', 'local:4']);
    expect(run.status, run.stderr).toBe(0);
    expect(parsePlan(JSON.parse(run.stdout)).stages).toHaveLength(2);
  });

  it('--links uses the bandwidth and latency shoal cluster test measured between the hosts', () => {
    const dgx = join(root, 'examples/clusters/dgx-a100-2x8.json');
    const env = { ...process.env, SHOAL_CONFIG_DIR: join(scratch, 'config') };
    const args = ['--model', 'resnet50', '--cluster', dgx, '--top', '1', '--json'];
    const missing = shoal([...args, '--links', 'lab'], env);
    expect(missing.status).toBe(1);
    expect(missing.stderr).toMatch(/Cluster lab has no measured links yet \(.*cluster-profiles\/lab\.json\): run shoal cluster test lab first/);
    // A survey that found a slow network between the two DGX hosts (100 MB/s, 1 ms).
    saveProfile(join(scratch, 'config'), { version: 1, cluster: 'lab', measuredAt: '2026-11-29T12:00:00Z', hosts: ['dgx-1', 'dgx-2'], links: [{ from: 'dgx-1', to: 'dgx-2', alpha: 1e-3, beta: 1e8, rttMs: 2 }] });
    const measured = shoal([...args, '--links', 'lab'], env);
    expect(measured.status, measured.stderr).toBe(0);
    expect(measured.stderr).toContain('links between hosts: as measured by shoal cluster test lab at 2026-11-29T12:00:00Z');
    const datasheet = parseOutput(shoal(args, env).stdout).suggestions[0].predicted.stepTimeMs;
    expect(parseOutput(measured.stdout).suggestions[0].predicted.stepTimeMs).toBeGreaterThan(datasheet);
  });
});

function saveProfile(configDir: string, profile: unknown): void {
  mkdirSync(join(configDir, 'cluster-profiles'), { recursive: true });
  writeFileSync(join(configDir, 'cluster-profiles', 'lab.json'), JSON.stringify(profile));
}
