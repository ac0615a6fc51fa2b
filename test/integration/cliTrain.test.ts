import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { JobEventSchema, type JobEvent } from '../../engine/protocol/events.js';

const root = join(__dirname, '..', '..');

function npxShoal(args: string[], timeoutMs: number) {
  return spawnSync('npx', ['shoal', ...args], { cwd: root, encoding: 'utf8', timeout: timeoutMs, env: { ...process.env, CI: 'true' } });
}

/**
 * The foundation slice from the command line: 2 pipeline stages (GPipe, 4 micro-batches) × 2-way data
 * parallel, a coordinator and 4 real agent processes, trains `mlp` on the bundled MNIST digits to at
 * least 95% validation accuracy on the 2,000 held-out samples.
 */
describe('npx shoal train', () => {
  it('pp2-dp2 on local:4 reaches ≥ 95% validation accuracy and streams JSON lines', () => {
    const run = npxShoal(['train', '--model', 'mlp', '--cluster', 'local:4', '--plan', 'pp2-dp2', '--json', '--epochs', '5'], 600_000);
    expect(run.status, run.stderr).toBe(0);
    const lines = run.stdout.trim().split('\n');
    const events: JobEvent[] = lines.map((line) => JobEventSchema.parse(JSON.parse(line)));

    const agents = events.filter((e) => e.type === 'agent');
    expect(agents.map((a) => [a.stage, a.replica]).sort()).toEqual([[0, 0], [0, 1], [1, 0], [1, 1]]);
    for (const a of agents) expect(['wasm', 'cpu', 'tensorflow', 'tensorflow-gpu']).toContain(a.backend);

    const steps = events.filter((e) => e.type === 'step');
    expect(steps).toHaveLength(625); // 5 epochs × 125 steps of 64 samples
    const early = steps.slice(0, 20).reduce((s, e) => s + e.loss, 0) / 20;
    const late = steps.slice(-20).reduce((s, e) => s + e.loss, 0) / 20;
    expect(late).toBeLessThan(early / 4);
    expect(events.filter((e) => e.type === 'eval')).toHaveLength(5);

    const last = JSON.parse(lines[lines.length - 1]);
    expect(last.final).toBe(true);
    expect(last.validationAccuracy).toBeGreaterThanOrEqual(0.95);
    expect(last.validationAccuracy).toBeLessThanOrEqual(1);
  }, 600_000);

  it('refuses a plan the cluster cannot run, saying what to change', () => {
    const run = npxShoal(['train', '--model', 'mlp', '--cluster', 'local:2', '--plan', 'pp2-dp2', '--steps', '1'], 60_000);
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/needs 4 agents but the cluster has 2/);
    expect(run.stderr).toMatch(/Fix:/);
  });

  it('names the models it knows when given an unknown one', () => {
    const run = npxShoal(['train', '--model', 'resnet9000'], 60_000);
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/Unknown model "resnet9000". Available models: mlp, mlp-wide, cnn/);
  });
});
