import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CONTROL_FILE, readControlFile, writeControlFile } from '../../engine/node/jobs/controlFile.js';

const dir = mkdtempSync(join(tmpdir(), 'shoal-control-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('control.json', () => {
  it('left by a process that is gone is removed by the next reader, secret and all', () => {
    const gone = Number(spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' }).stdout);
    writeControlFile(dir, { jobId: 'job-stale', host: '127.0.0.1', port: 4242, secret: 'cd'.repeat(32), ownerPid: gone });
    expect(existsSync(join(dir, CONTROL_FILE))).toBe(true);
    expect(readControlFile(dir)).toBeUndefined();
    expect(existsSync(join(dir, CONTROL_FILE))).toBe(false);
  });

  it('is removed when the process that wrote it exits without cleaning up', () => {
    const child = mkdtempSync(join(dir, 'child-'));
    // A real process writes it and exits at once (process.exit: no job, no cleanup of its own).
    const run = spawnSync(
      process.execPath,
      ['--import', 'tsx', '-e', `import('${join(__dirname, '..', '..', 'engine', 'node', 'jobs', 'controlFile.ts')}').then((m) => { m.writeControlFile(${JSON.stringify(child)}, { jobId: 'j', host: '127.0.0.1', port: 1, secret: 'ef'.repeat(32), ownerPid: process.pid }); process.exit(3); })`],
      { encoding: 'utf8' },
    );
    expect(run.status, run.stderr).toBe(3);
    expect(existsSync(join(child, CONTROL_FILE))).toBe(false);
  });
});
