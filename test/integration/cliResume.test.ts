import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { JobEventSchema } from '../../engine/protocol/events.js';

const root = join(__dirname, '..', '..');
const work = mkdtempSync(join(tmpdir(), 'shoal-cli-resume-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const shoal = (args: string[]) => spawnSync(process.execPath, [join(root, 'bin', 'shoal.cjs'), ...args], { cwd: root, encoding: 'utf8', timeout: 180_000 });

describe('shoal resume', () => {
  it('continues a run folder from its newest checkpoint, under another plan', () => {
    const run = join(work, 'run');
    const first = shoal(['train', '--model', 'mlp', '--cluster', 'local:4', '--plan', 'pp2-dp2', '--steps', '6', '--out', run, '--json']);
    expect(first.status, first.stderr).toBe(0);
    const second = shoal(['resume', run, '--plan', 'pp1-dp2', '--cluster', 'local:2', '--steps', '10', '--json']);
    expect(second.status, second.stderr).toBe(0);
    const events = second.stdout.trim().split('\n').map((l) => JobEventSchema.parse(JSON.parse(l)));
    expect(events.find((e) => e.type === 'checkpoint' && e.action === 'restored')).toMatchObject({ step: 6 });
    expect(events.filter((e) => e.type === 'step').map((e) => (e.type === 'step' ? e.step : -1))).toEqual([6, 7, 8, 9]);
    expect(events.at(-1)).toMatchObject({ type: 'final', steps: 10 });
  });

  it('says what it looked for when the run does not exist', () => {
    const missing = shoal(['resume', join(work, 'nope')]);
    expect(missing.status).toBe(1);
    expect(missing.stderr).toMatch(/No run or checkpoint "nope": looked at/);
  });
});
