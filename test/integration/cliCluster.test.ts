import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const root = join(__dirname, '..', '..');
const config = mkdtempSync(join(tmpdir(), 'shoal-cli-cluster-'));
afterAll(() => rmSync(config, { recursive: true, force: true }));
const shoal = (args: string[]) =>
  spawnSync(process.execPath, [join(root, 'bin', 'shoal.cjs'), 'cluster', ...args], { encoding: 'utf8', timeout: 60_000, env: { ...process.env, SHOAL_CONFIG_DIR: config } });

/** `shoal cluster` from the bundled CLI (ssh2 bundled without its optional native parts). */
describe('shoal cluster (bundled CLI)', () => {
  it('adds a cluster and lists it', () => {
    const add = shoal(['add', 'lab', '--host', 'alice@127.0.0.9:2222']);
    expect(add.status, add.stderr).toBe(0);
    const list = shoal(['list', '--json']);
    expect(list.status, list.stderr).toBe(0);
    expect(list.stdout).toContain('lab');
    expect(list.stdout).toContain('127.0.0.9');
  });

  it('answers a usage error with exit code 2 and the usage', () => {
    const bad = shoal(['frobnicate']);
    expect(bad.status).toBe(2);
    expect(bad.stderr + bad.stdout).toMatch(/shoal cluster add <name>/);
  });
});
