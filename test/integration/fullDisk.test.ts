import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statfsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runDeployCommand } from '../../engine/node/commands/deploy.js';
import { runPullCommand } from '../../engine/node/commands/pull.js';
import { listDeployRecords } from '../../engine/node/jobs/deployRecord.js';
import { JobEventSchema, type JobEvent } from '../../engine/protocol/events.js';
import { jsonLines, runCommand, stopDeployedJobs } from '../support/commandRun.js';
import { startShoal } from '../support/faultJob.js';
import { useTempHome } from '../support/homes.js';

/**
 * A disk that fills up under a running job, for real: the run folder is on a small tmpfs (a file
 * system of its own, so "full" is the kernel's ENOSPC, not a simulation), grown or emptied once the
 * job says it waits. Mounting needs root (or CAP_SYS_ADMIN), which CI has; elsewhere these tests are
 * reported as skipped, with the reason in their name.
 */
const work = mkdtempSync(join(tmpdir(), 'shoal-full-disk-'));
const mounts: string[] = [];
const mount = (args: string[]) => spawnSync('mount', args, { encoding: 'utf8' }).status === 0;
/** A tmpfs of `size` (e.g. '1m') at a new folder, or null where this process may not mount one. */
function smallDisk(name: string, size: string): string | null {
  const at = join(work, name);
  mkdirSync(at);
  if (process.platform !== 'linux' || !mount(['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', at])) return null;
  mounts.push(at);
  return at;
}
const canMount = (() => {
  const probe = smallDisk('probe', '64k');
  return probe !== null;
})();
const home = useTempHome();
afterAll(async () => {
  await stopDeployedJobs();
  for (const at of mounts.reverse()) spawnSync('umount', ['-l', at]);
  home.restore();
  rmSync(work, { recursive: true, force: true });
});

const isLog = (e: JobEvent, text: string) => e.type === 'log' && e.message.includes(text);

describe('a full disk (needs to mount a tmpfs: root or CAP_SYS_ADMIN)', () => {
  it.skipIf(!canMount)('holds the last checkpoint in memory while the disk is full, says so, and writes it once space is freed: nothing is lost', async () => {
    const disk = smallDisk('checkpoint', '1m')!;
    const run = join(disk, 'run');
    // The MLP's checkpoint (weights and Adam's slots) is about 6 MiB: it does not fit in 1 MiB.
    const job = startShoal(['train', '--model', 'mlp', '--cluster', 'local:1', '--steps', '3', '--out', run], join(work, 'data'), run);
    const waiting = await job.waitFor((e) => e.type === 'log' && e.level === 'error' && e.message.includes('are held in memory'));
    expect(waiting.type === 'log' && waiting.message).toContain(`Cannot write checkpoint ${join(run, 'checkpoints', 'step-0000003.ckpt')}: the disk is full (ENOSPC`);
    expect(waiting.type === 'log' && waiting.message).toContain(`free space in ${join(run, 'checkpoints')} and they are written at the next try`);
    // The user frees space: here, the file system grows.
    expect(mount(['-o', 'remount,size=64m', disk])).toBe(true);
    const done = await job.exited;
    expect(done.exitCode, done.stderr).toBe(0);
    expect(done.events.some((e) => e.type === 'checkpoint' && e.action === 'saved' && e.step === 3)).toBe(true);
    expect(done.events.some((e) => isLog(e, 'The checkpoint of step 3 was written after waiting'))).toBe(true);
    expect(done.events.some((e) => e.type === 'final')).toBe(true);
    expect(existsSync(join(run, 'checkpoints', 'step-0000003.ckpt'))).toBe(true);
  }, 300_000);

  it.skipIf(!canMount)('a disk that fills mid-run: training goes on, events wait in memory, and once space is freed the history on disk is whole', async () => {
    const disk = smallDisk('events', '16m')!;
    const run = join(disk, 'run');
    const filler = join(disk, 'filler');
    const steps = 40;
    const job = startShoal(['train', '--model', 'mlp', '--cluster', 'local:1', '--steps', String(steps), '--out', run], join(work, 'data'), run);
    await job.waitFor((e) => e.type === 'step' && e.step >= 3);
    // Another program fills the disk to the last byte.
    const free = statfsSync(disk).bavail * statfsSync(disk).bsize;
    try {
      writeFileSync(filler, Buffer.alloc(free + 1024 ** 2));
    } catch (err) {
      expect((err as NodeJS.ErrnoException).code).toBe('ENOSPC');
    }
    expect(statfsSync(disk).bavail).toBe(0);
    await job.waitFor((e) => isLog(e, `The job's event log ${join(run, 'events.jsonl')} cannot be written`));
    // Training goes on to its end, where the last checkpoint waits for room too.
    await job.waitFor((e) => isLog(e, 'are held in memory'));
    rmSync(filler);
    const done = await job.exited;
    expect(done.exitCode, done.stderr).toBe(0);
    expect(done.events.some((e) => isLog(e, `The job's event log ${join(run, 'events.jsonl')} caught up:`))).toBe(true);
    // On disk: every event, whole and in order (line i is event i), every step among them.
    const lines = readFileSync(join(run, 'events.jsonl'), 'utf8').split('\n');
    expect(lines.pop()).toBe('');
    const logged = lines.map((l) => JobEventSchema.parse(JSON.parse(l)));
    const stepsOf = (events: JobEvent[]) => events.flatMap((e) => (e.type === 'step' ? [e.step] : []));
    expect(stepsOf(logged)).toEqual(stepsOf(done.events));
    expect(stepsOf(logged)).toHaveLength(steps);
    expect(logged.some((e) => e.type === 'final')).toBe(true);
    expect(logged.some((e) => isLog(e, 'cannot be written'))).toBe(true);
  }, 300_000);

  it.skipIf(!canMount)('shoal pull onto a full disk: refused before copying when it cannot fit, and a copy cut by the disk continues once there is room', async () => {
    process.env.SHOAL_DATA_DIR = join(work, 'pull-data');
    try {
      const d = await runCommand(runDeployCommand, '--cluster', 'local', '--model', 'mlp', '--plan', 'pp1-dp1', '--steps', '3', '--json');
      expect(d.code, d.err).toBe(0);
      const id = jsonLines<{ jobId?: string }>(d.out)[0].jobId!;
      const runDir = listDeployRecords().find((r) => r.record.jobId === id)!.runDir;
      const source = join(home.home, '.shoal', 'runs', id, 'checkpoints', 'step-0000003.ckpt');
      for (let i = 0; i < 600 && !existsSync(source); i++) await new Promise((r) => setTimeout(r, 100));
      expect(existsSync(source)).toBe(true);

      // The whole run folder on a 1 MiB disk (its own small files, deploy.json among them, moved onto it):
      // the ~6 MiB checkpoint does not fit, which is said before any byte is copied.
      const own = readdirSync(runDir, { withFileTypes: true }).filter((f) => f.isFile()).map((f) => ({ name: f.name, bytes: readFileSync(join(runDir, f.name)) }));
      expect(mount(['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', runDir])).toBe(true);
      mounts.push(runDir);
      for (const f of own) writeFileSync(join(runDir, f.name), f.bytes);
      const refused = await runCommand(runPullCommand, id);
      expect(refused.code).toBe(1);
      expect(refused.err).toMatch(new RegExp(`the disk holding ${runDir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} has 1\\.0 MiB free and this copy needs \\d+\\.\\d MiB: free some space`));
      spawnSync('umount', ['-l', runDir]);
      mounts.pop();

      // Only the checkpoints folder is small: the space check (of the run folder's disk) passes, the disk fills mid-copy.
      const checkpoints = join(runDir, 'checkpoints');
      mkdirSync(checkpoints, { recursive: true });
      expect(mount(['-t', 'tmpfs', '-o', 'size=2m', 'tmpfs', checkpoints])).toBe(true);
      mounts.push(checkpoints);
      const cut = await runCommand(runPullCommand, id);
      expect(cut.code).toBe(1);
      expect(cut.err).toContain(`the disk is full: writing ${join(checkpoints, 'step-0000003.ckpt')}.part failed (ENOSPC). Free some space, then run shoal pull again; it continues this file from the`);
      // Room again: the next pull continues the cut file and ends with the very same bytes.
      expect(mount(['-o', 'remount,size=64m', checkpoints])).toBe(true);
      const resumed = await runCommand(runPullCommand, id, '--json');
      expect(resumed.code, resumed.err).toBe(0);
      expect(readFileSync(join(checkpoints, 'step-0000003.ckpt')).equals(readFileSync(source))).toBe(true);
      expect(existsSync(join(checkpoints, 'step-0000003.ckpt.part'))).toBe(false);
    } finally {
      delete process.env.SHOAL_DATA_DIR;
    }
  }, 300_000);
});
