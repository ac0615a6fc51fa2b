import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const cli = join(__dirname, '..', '..', 'dist', 'cli.cjs');

describe('shoal <command> --help', () => {
  for (const command of ['train', 'plan', 'deploy', 'jobs', 'attach', 'stop', 'pull', 'resume', 'export', 'resize']) {
    it(`${command} --help prints its usage and exits 0`, () => {
      const run = spawnSync(process.execPath, [cli, command, '--help'], { encoding: 'utf8' });
      expect(run.status).toBe(0);
      expect(run.stdout).toContain(`shoal ${command}`);
      expect(run.stderr).toBe('');
    });
  }
  it('train --help documents the model file and the data folder', () => {
    const run = spawnSync(process.execPath, [cli, 'train', '-h'], { encoding: 'utf8' });
    expect(run.stdout).toMatch(/--model .*model\.json/);
    expect(run.stdout).toMatch(/x\.npy and y\.npy/);
  });
});
