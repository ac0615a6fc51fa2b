import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { acquireRunLock, releaseRunLock, RUN_LOCK, RunFolderBusyError } from '../../engine/node/jobs/runLock.js';

const root = mkdtempSync(join(tmpdir(), 'shoal-runlock-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const folder = (name: string) => {
  const dir = join(root, name);
  mkdirSync(dir);
  return dir;
};

/** A pid that certainly is not running: a child that has already exited. */
const deadPid = (): number => Number(spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' }).stdout);

describe('run folder lock', () => {
  it('is created exclusively, names its owner, and refuses a second taker until released', () => {
    const dir = folder('busy');
    acquireRunLock(dir);
    const owner = JSON.parse(readFileSync(join(dir, RUN_LOCK), 'utf8'));
    expect(owner).toMatchObject({ pid: process.pid, host: hostname() });
    let refused: unknown;
    try {
      acquireRunLock(dir);
    } catch (err) {
      refused = err;
    }
    expect(refused).toBeInstanceOf(RunFolderBusyError);
    expect((refused as Error).message).toContain(`Run folder ${dir} is in use by another job (pid ${process.pid} on ${hostname()}, since ${owner.since})`);
    expect((refused as Error).message).toMatch(/choose another run folder \(--out\)/);
    releaseRunLock(dir);
    expect(existsSync(join(dir, RUN_LOCK))).toBe(false);
    acquireRunLock(dir);
    releaseRunLock(dir);
  });

  it('refuses while another live process on this host holds it', () => {
    const dir = folder('other');
    // This test runner's parent is alive and is not us.
    writeFileSync(join(dir, RUN_LOCK), JSON.stringify({ pid: process.ppid, host: hostname(), since: '2026-12-01T00:00:00.000Z' }));
    expect(() => acquireRunLock(dir)).toThrow(`pid ${process.ppid} on ${hostname()}, since 2026-12-01T00:00:00.000Z`);
    expect(JSON.parse(readFileSync(join(dir, RUN_LOCK), 'utf8')).pid).toBe(process.ppid);
  });

  it('takes over a stale lock (same host, owner dead) with a warning', () => {
    const dir = folder('stale');
    const pid = deadPid();
    writeFileSync(join(dir, RUN_LOCK), JSON.stringify({ pid, host: hostname(), since: '2026-12-01T00:00:00.000Z' }));
    const warnings: string[] = [];
    acquireRunLock(dir, (m) => warnings.push(m));
    expect(warnings).toEqual([expect.stringContaining(`locked by pid ${pid} on ${hostname()}`)]);
    expect(warnings[0]).toMatch(/no longer running; taking it over/);
    expect(JSON.parse(readFileSync(join(dir, RUN_LOCK), 'utf8')).pid).toBe(process.pid);
    releaseRunLock(dir);
  });

  it('never takes a lock from another host, whose pids it cannot check', () => {
    const dir = folder('remote');
    writeFileSync(join(dir, RUN_LOCK), JSON.stringify({ pid: deadPid(), host: 'elsewhere.example', since: '2026-12-01T00:00:00.000Z' }));
    expect(() => acquireRunLock(dir)).toThrow(/on elsewhere\.example/);
  });
});
