import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, chmodSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { JobEventSchema, type JobEvent } from '../../engine/protocol/events.js';

/**
 * Run folders belong to one job, and their checkpoints are honest: the real `shoal`
 * command, its real coordinator and agent processes, real files.
 */
const root = join(__dirname, '..', '..');
const work = mkdtempSync(join(tmpdir(), 'shoal-run-folders-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const env = { ...process.env, SHOAL_DATA_DIR: join(work, 'data') };
const shoal = (args: string[]) => spawnSync(process.execPath, [join(root, 'bin', 'shoal.cjs'), ...args], { cwd: root, env, encoding: 'utf8', timeout: 240_000 });
const events = (stdout: string): JobEvent[] =>
  stdout
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JobEventSchema.parse(JSON.parse(l)));

describe('run folders and checkpoints', () => {
  it('refuses a second job on a busy run folder; Ctrl-C checkpoints, and resume finishes from it', async () => {
    const run = join(work, 'interrupted');
    const first = spawn(process.execPath, [join(root, 'bin', 'shoal.cjs'), 'train', '--model', 'mlp', '--cluster', 'local:1', '--steps', '100000', '--out', run, '--json'], { cwd: root, env });
    let out = '';
    let err = '';
    first.stdout.on('data', (d: Buffer) => (out += d.toString()));
    first.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const exited = new Promise<number | null>((resolve) => first.once('exit', (code) => resolve(code)));
    // Running: a few steps done.
    while (events(out).filter((e) => e.type === 'step').length < 3) {
      if (first.exitCode !== null) throw new Error(`shoal train ended early: ${err}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(JSON.parse(readFileSync(join(run, 'run.lock'), 'utf8'))).toMatchObject({ pid: first.pid });

    const second = shoal(['train', '--model', 'mlp', '--cluster', 'local:1', '--steps', '5', '--out', run, '--json']);
    expect(second.status).toBe(1);
    expect(second.stderr).toContain(`Run folder ${run} is in use by another job (pid ${first.pid} on `);
    expect(second.stderr).toMatch(/choose another run folder \(--out\)/);

    first.kill('SIGINT');
    expect(await exited, err).toBe(130);
    const written = /checkpoint (\S+step-(\d+)\.ckpt) written/.exec(err);
    expect(written, err).not.toBeNull();
    expect(existsSync(written![1])).toBe(true);
    expect(err).toContain(`\`shoal resume ${run}\` continues from it`);
    expect(events(out).find((e) => e.type === 'status' && e.state === 'stopped')).toBeDefined();
    // Nothing of the job is left holding the folder or its secret.
    expect(readdirSync(run).filter((f) => f === 'run.lock' || f === 'control.json')).toEqual([]);

    const at = Number(written![2]);
    const resumed = shoal(['resume', run, '--cluster', 'local:1', '--steps', String(at + 2), '--json']);
    expect(resumed.status, resumed.stderr).toBe(0);
    const after = events(resumed.stdout);
    expect(after.find((e) => e.type === 'checkpoint' && e.action === 'restored')).toMatchObject({ step: at, path: written![1] });
    expect(after.at(-1)).toMatchObject({ type: 'final', steps: at + 2 });
  }, 600_000);

  it('a run folder deleted mid-run is said in an error event, and the job that cannot checkpoint fails', async () => {
    const run = join(work, 'vanishing');
    const job = spawn(process.execPath, [join(root, 'bin', 'shoal.cjs'), 'train', '--model', 'mlp', '--cluster', 'local:1', '--steps', '100000', '--out', run, '--json'], { cwd: root, env });
    let out = '';
    let err = '';
    job.stdout.on('data', (d: Buffer) => (out += d.toString()));
    job.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const exited = new Promise<number | null>((resolve) => job.once('exit', (code) => resolve(code)));
    while (events(out).filter((e) => e.type === 'step').length < 2) {
      if (job.exitCode !== null) throw new Error(`shoal train ended early: ${err}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    rmSync(run, { recursive: true, force: true });
    const gone = `The run folder ${run} was deleted while the job ran`;
    while (!events(out).some((e) => e.type === 'log' && e.level === 'error' && e.message.startsWith(gone))) {
      if (job.exitCode !== null) throw new Error(`shoal train ended before it noticed: ${err}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    // Ctrl-C asks for a checkpoint, which has nowhere to go: the job fails, saying why, not 130.
    job.kill('SIGINT');
    expect(await exited, err).toBe(1);
    expect(err).toMatch(new RegExp(`could not be written.*the run folder ${run.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} no longer exists`));
  }, 300_000);

  it('a job whose checkpoints cannot be written fails, naming the file and the OS error', () => {
    const run = join(work, 'read-only');
    mkdirSync(run);
    const checkpoints = join(run, 'checkpoints');
    // Root writes through any mode bits: it gets a folder even it cannot write in (sysfs).
    if (process.getuid?.() === 0) symlinkSync('/sys/kernel', checkpoints);
    else {
      mkdirSync(checkpoints);
      chmodSync(checkpoints, 0o555);
    }
    // The folder holds something (the checkpoints folder): --overwrite lets the run use it.
    const result = shoal(['train', '--model', 'mlp', '--cluster', 'local:1', '--steps', '2', '--checkpoint-every', '1', '--out', run, '--overwrite', '--json']);
    expect(result.status).toBe(1);
    const logged = events(result.stdout);
    // The mid-job failure is reported at once, and training goes on.
    expect(logged.find((e) => e.type === 'log' && e.level === 'error' && e.message.includes(`Cannot write checkpoint ${join(checkpoints, 'step-0000001.ckpt')}`))).toBeDefined();
    expect(logged.some((e) => e.type === 'final')).toBe(false);
    expect(result.stderr).toContain(`The checkpoint of step 2 could not be written, so this job's weights are not on disk: Cannot write checkpoint ${join(checkpoints, 'step-0000002.ckpt')}: the folder is not writable (EACCES`);
    expect(result.stderr).not.toMatch(/shoal resume/);
  }, 300_000);

  it('resume skips a corrupt newest checkpoint, warns, and continues from the intact one before it', () => {
    const run = join(work, 'corrupt');
    const first = shoal(['train', '--model', 'mlp', '--cluster', 'local:1', '--steps', '4', '--checkpoint-every', '2', '--out', run, '--json']);
    expect(first.status, first.stderr).toBe(0);
    const newest = join(run, 'checkpoints', 'step-0000004.ckpt');
    const bytes = readFileSync(newest);
    bytes[bytes.length - 100] ^= 0xff;
    writeFileSync(newest, bytes);
    const resumed = shoal(['resume', run, '--cluster', 'local:1', '--steps', '6', '--json']);
    expect(resumed.status, resumed.stderr).toBe(0);
    expect(resumed.stderr).toContain(`shoal: warning: Skipping checkpoint ${newest}: is corrupted or truncated (its SHA-256 checksum does not match)`);
    const after = events(resumed.stdout);
    expect(after.find((e) => e.type === 'checkpoint' && e.action === 'restored')).toMatchObject({ step: 2, path: join(run, 'checkpoints', 'step-0000002.ckpt') });
    expect(after.filter((e) => e.type === 'step').map((e) => (e.type === 'step' ? e.step : -1))).toEqual([2, 3, 4, 5]);
    expect(after.at(-1)).toMatchObject({ type: 'final', steps: 6 });
  }, 300_000);
});
