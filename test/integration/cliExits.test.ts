import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { zooModel } from '../../engine/model/zoo.js';
import { presetPlan } from '../../engine/plan/presets.js';
import { dense, sequential } from '../support/kerasDocs.js';

/**
 * Honest exits, through the real `shoal` command: every bad option, plan, model or cluster
 * ends with exit status 1 and one message naming what, where and what to do — and a run whose loss
 * goes non-finite stops with the step and a lower learning rate suggested, instead of exiting 0.
 */
const root = join(__dirname, '..', '..');
const dir = mkdtempSync(join(tmpdir(), 'shoal-exits-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function shoal(args: string[], timeoutMs = 120_000) {
  const run = spawnSync(process.execPath, [join(root, 'bin', 'shoal.cjs'), ...args], { cwd: dir, encoding: 'utf8', timeout: timeoutMs, env: { ...process.env, CI: 'true' } });
  return { code: run.status, err: run.stderr, out: run.stdout };
}

const file = (name: string, json: unknown) => {
  const path = join(dir, name);
  writeFileSync(path, JSON.stringify(json));
  return path;
};

describe('shoal exits non-zero with the reason', () => {
  it.each([
    [['--epochs', 'abc'], '--epochs "abc": not a number; expected a number above 0'],
    [['--steps', '1.5'], '--steps "1.5": not a whole number'],
    [['--steps=-5'], '--steps "-5": too small'],
    [['--steps', '-5'], '--steps "-5": too small'],
    [['--checkpoint-every', '0'], '--checkpoint-every "0": too small'],
    [['--checkpoint-every', 'abc'], '--checkpoint-every "abc": not a number'],
    [['--lr', '1e400'], '--lr "1e400": too large to be a number (it reads as Infinity)'],
    [['--cluster', 'local:1000'], 'the limit is 64'],
  ])('train %j', (args, message) => {
    const run = shoal(['train', '--model', 'mlp', ...args]);
    expect(run.code, run.err).toBe(1);
    expect(run.err).toContain(message);
  });

  it.each([
    [['--steps', '1.5'], '--steps "1.5": not a whole number'],
    [['--epochs', 'abc'], '--epochs "abc": not a number'],
    [['--eval-every', '0'], '--eval-every "0": too small'],
    [['--checkpoint-every', 'abc'], '--checkpoint-every "abc": not a number'],
  ])('deploy %j (before any host is touched)', (args, message) => {
    const run = shoal(['deploy', '--cluster', 'local', '--model', 'mlp', ...args]);
    expect(run.code, run.err).toBe(1);
    expect(run.err).toContain(message);
  });

  it("the README's `shoal plan --model mlp --plan pp2-dp2` checks the plan on the 4 agents it needs, whatever the core count", () => {
    const run = shoal(['plan', '--model', 'mlp', '--plan', 'pp2-dp2']);
    expect(run.code, run.err).toBe(0);
    expect(JSON.parse(run.out).stages).toHaveLength(2);
    expect(run.err).not.toContain('too-few-agents');
  });

  it('a plan file with a misspelt field is refused with the known name', () => {
    const plan = file('typo.json', { ...presetPlan(zooModel('mlp'), 'pp1-dp1'), gradientClipnorm: 1 });
    const run = shoal(['plan', '--model', 'mlp', '--plan-file', plan]);
    expect(run.code).toBe(1);
    expect(run.err).toContain('Unknown field "gradientClipnorm" at gradientClipnorm (did you mean gradientClipNorm?)');
  });

  it('--plan-file beside a --batch that disagrees is refused', () => {
    const plan = file('plan.json', presetPlan(zooModel('mlp'), 'pp1-dp1'));
    const run = shoal(['train', '--model', 'mlp', '--plan-file', plan, '--batch', '128', '--steps', '1']);
    expect(run.code).toBe(1);
    expect(run.err).toContain("--batch 128, but the plan's globalBatch is 64");
  });

  it('shoal plan refuses a model with import errors: negative units, no layers', () => {
    const negative = shoal(['plan', '--model', file('negative.json', sequential([dense('a', 8, [4]), dense('b', -3)])), '--cluster', 'local:2']);
    expect(negative.code).toBe(1);
    expect(negative.err).toMatch(/error invalid-layer-size \(layer b\): Layer "b" \(Dense\): "units" is -3/);
    const empty = shoal(['plan', '--model', file('empty.json', sequential([])), '--cluster', 'local:2']);
    expect(empty.code).toBe(1);
    expect(empty.err).toContain('error empty-model');
    expect(empty.err).not.toContain('No plan fits');
  });

  it('a cluster file with a device count of 1e9 is refused at once', () => {
    const cluster = file('big.json', { name: 'big', hosts: [{ name: 'a', devices: [{ preset: 'cpu-core', count: 1e9 }] }], links: { intraHost: { alpha: 1e-5, beta: 1e9 } } });
    const run = shoal(['plan', '--model', 'mlp', '--cluster', cluster]);
    expect(run.code).toBe(1);
    expect(run.err).toContain('at most 1024 devices');
  });

  it('learning rate 1e5: the run stops at the step the loss went non-finite, exit 1', () => {
    const run = shoal(['train', '--model', 'mlp', '--data', 'synthetic:256', '--optimizer', 'sgd', '--lr', '1e5', '--batch', '32', '--steps', '8', '--cluster', 'local:1'], 300_000);
    expect(run.code, run.err).toBe(1);
    expect(run.err).toMatch(/The loss became non-finite \(NaN\) at step \d+: training diverged\. Lower the learning rate \(it is 100000\b/);
  }, 300_000);
});
