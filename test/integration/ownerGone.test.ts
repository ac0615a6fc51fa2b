import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, describe, expect, it } from 'vitest';
import { JobEventSchema, type JobEvent } from '../../engine/protocol/events.js';

/**
 * An attached job ends with its owner even when the owner cannot end it: `shoal train` killed with
 * SIGKILL (as a crash or the OOM killer would) leaves its coordinator and agents behind, which used to
 * train on unseen to the last step. The real command and processes.
 */
const root = join(__dirname, '..', '..');
const work = mkdtempSync(join(tmpdir(), 'shoal-owner-gone-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const gone = (pid: number) => {
  try {
    process.kill(pid, 0);
    return false;
  } catch {
    return true;
  }
};
const history = (run: string): JobEvent[] =>
  existsSync(join(run, 'events.jsonl'))
    ? readFileSync(join(run, 'events.jsonl'), 'utf8')
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JobEventSchema.parse(JSON.parse(l)))
    : [];

describe('the owner of an attached job', () => {
  it('killed with SIGKILL: the job stops at the next step with a checkpoint, says why, and its processes end', async () => {
    const run = join(work, 'run');
    const owner = spawn(process.execPath, [join(root, 'bin', 'shoal.cjs'), 'train', '--model', 'mlp', '--cluster', 'local:2', '--steps', '100000', '--out', run, '--json'], {
      cwd: root,
      env: { ...process.env, SHOAL_DATA_DIR: join(work, 'data') },
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    const pids: number[] = [];
    await new Promise<void>((resolve, reject) => {
      owner.once('exit', (code) => reject(new Error(`shoal train exited (${code}) before its first step`)));
      createInterface({ input: owner.stdout! }).on('line', (line) => {
        if (!line.startsWith('{')) return;
        const event = JobEventSchema.parse(JSON.parse(line));
        // Every agent process: those the first generation placed and any it left waiting.
        if (event.type === 'membership' && pids.length === 0) pids.push(...event.agents.map((a) => a.pid), ...(event.waiting ?? []).map((w) => w.pid));
        if (event.type === 'step' && event.step >= 2) resolve();
      });
    });
    owner.kill('SIGKILL');
    expect(pids).toHaveLength(2);

    let stopped: JobEvent | undefined;
    for (let i = 0; i < 600 && !stopped; i++, await sleep(200)) stopped = history(run).find((e) => e.type === 'status' && e.state === 'stopped');
    expect(stopped, JSON.stringify(history(run).slice(-5))).toBeDefined();
    expect(history(run).some((e) => e.type === 'log' && e.level === 'warn' && e.message.startsWith(`The job's owner (pid ${owner.pid}: shoal train or the studio) is gone`))).toBe(true);
    expect(history(run).some((e) => e.type === 'checkpoint' && e.action === 'saved')).toBe(true);
    expect(readdirSync(join(run, 'checkpoints')).some((f) => /^step-\d+\.ckpt$/.test(f))).toBe(true);
    for (let i = 0; i < 300 && !pids.every(gone); i++) await sleep(100);
    expect(pids.filter((pid) => !gone(pid))).toEqual([]);
  }, 300_000);
});
