import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { ClusterSettingsSchema, parseEnvAssignment } from '../../engine/protocol/clusterSettings.js';
import { runSetup, SetupError, type LineRunner, type SetupProgress } from '../../engine/node/deploy/clusterSetup.js';
import { hostFolder, jobDirsScript, remoteDirWord, remotePath } from '../../engine/node/deploy/remotePaths.js';
import { shareGroups } from '../../engine/node/deploy/sharedRemoteDir.js';

/** Runs the setup script with this machine's sh, the script on stdin as over SSH, in a scratch $HOME. */
const home = mkdtempSync(join(tmpdir(), 'shoal-setup-'));
afterAll(() => rmSync(home, { recursive: true, force: true }));
const localRunner: LineRunner = (script, onLine) =>
  new Promise((resolve, reject) => {
    const child = spawn('sh', ['-s'], { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home } });
    const out: string[] = [];
    let rest = '';
    child.stdout.on('data', (d: Buffer) => {
      out.push(d.toString());
      const parts = (rest + d.toString()).split('\n');
      rest = parts.pop() ?? '';
      parts.filter(Boolean).forEach(onLine);
    });
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout: out.join(''), stderr: '' }));
    child.stdin.end(script);
  });

describe('setup commands (real sh)', () => {
  test('run in order from $HOME, each in its own shell with the env and no stdin; output is progress per command', async () => {
    const seen: SetupProgress[] = [];
    await runSetup(localRunner, ['cd /; pwd', 'pwd; echo "$GREETING"', 'cat; echo read-nothing'], { GREETING: "it's $HOME `x`" }, (p) => seen.push(p));
    expect(seen.filter((p) => p.line !== undefined).map((p) => `${p.index} ${p.line}`)).toEqual(['1 /', `2 ${home}`, "2 it's $HOME `x`", '3 read-nothing']);
    expect(seen.filter((p) => p.line === undefined).map((p) => p.index)).toEqual([1, 2, 3]);
  });

  test('the first failing command stops the rest and is named with its exit code and last lines; a syntax error is a failure too', async () => {
    const lines: string[] = [];
    const err = await runSetup(localRunner, ['echo one', 'for i in 1 2 3; do echo "line $i"; done; echo oops >&2; exit 9', 'echo never'], {}, (p) => p.line && lines.push(p.line)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SetupError);
    expect(err).toMatchObject({ index: 2, total: 3, code: 9, lastLines: ['line 1', 'line 2', 'line 3', 'oops'] });
    expect((err as Error).message).toContain('setup command 2 of 3 (`for i in 1 2 3; do echo "line $i"; done; echo oops >&2; exit 9`) exited with code 9; its last lines:');
    expect(lines).not.toContain('never');
    const syntax = await runSetup(localRunner, ['if then fi'], {}, () => {}).catch((e: unknown) => e);
    expect(syntax).toMatchObject({ index: 1, total: 1 });
    expect((syntax as SetupError).code).not.toBe(0);
  });
});

describe('cluster settings', () => {
  test('remote directories: ~/ or absolute, plain characters, no . or ..; trailing slashes dropped', () => {
    expect(ClusterSettingsSchema.parse({ remoteDir: '~/nfs-shoal/' }).remoteDir).toBe('~/nfs-shoal');
    expect(ClusterSettingsSchema.parse({ remoteDir: '/scratch/alice/shoal' }).remoteDir).toBe('/scratch/alice/shoal');
    for (const bad of ['shoal', '~', '/', '/scratch/my files', '~/a/../b', '/x/$USER', "/x'y"]) expect(ClusterSettingsSchema.safeParse({ remoteDir: bad }).success, bad).toBe(false);
  });

  test('env names are checked with a reason; values are literal', () => {
    expect(parseEnvAssignment('A=b=c')).toEqual(['A', 'b=c']);
    expect(() => parseEnvAssignment('1X=1')).toThrow('does not start with a digit');
    expect(() => parseEnvAssignment('NODE_PATH=/x')).toThrow('set by Shoal');
    expect(() => parseEnvAssignment('=x')).toThrow('is not NAME=value');
  });

  test('remote paths: shell words, display paths and per-host folder names', () => {
    expect(remoteDirWord('~/.shoal')).toBe(`"$HOME"/'.shoal'`);
    expect(remoteDirWord('/scratch/s')).toBe(`'/scratch/s'`);
    expect(remotePath('~/.shoal', 'runs', 'j1')).toBe('~/.shoal/runs/j1');
    expect(hostFolder('gpu1')).toBe('gpu1');
    expect(hostFolder('[::1]:22')).toMatch(/^1_22-[0-9a-f]{8}$/);
    expect(hostFolder('a b')).not.toBe(hostFolder('a_b'));
    expect(jobDirsScript('j1', 'gpu1', '/s')).toBe(`S='/s'; JOB="$S/jobs/j1"; J="$JOB/gpu1"; R="$S/runs/j1"`);
  });

  test('hosts that see each other’s markers form one group, in the hosts’ order', () => {
    const seen = new Map([
      ['a', []],
      ['b', ['d']],
      ['c', []],
      ['d', ['b']],
    ]);
    expect(shareGroups(['a', 'b', 'c', 'd'], seen)).toEqual([['a'], ['b', 'd'], ['c']]);
    expect(shareGroups(['a', 'b', 'c'], new Map([['c', ['a']]]))).toEqual([['a', 'c'], ['b']]);
  });
});

describe('the studio API stores and lists cluster settings', () => {
  test('add hosts with a remote dir, setup and env; a bad remote dir is refused naming the field', async () => {
    const { useTempHome } = await import('../support/homes.js');
    const { clustersService } = await import('../../engine/node/clustersService.js');
    const env = useTempHome();
    const api = clustersService();
    try {
      const listed = await api.addClusterHosts({ cluster: 'nfs', hosts: ['alice@10.0.0.5'], remoteDir: '/scratch/alice/shoal', setup: ['module load cuda'], env: { OMP_NUM_THREADS: '4' } });
      expect(listed.clusters.find((c) => c.name === 'nfs')?.settings).toEqual({ remoteDir: '/scratch/alice/shoal', setup: ['module load cuda'], env: { OMP_NUM_THREADS: '4' } });
      await expect(api.addClusterHosts({ cluster: 'nfs', hosts: ['alice@10.0.0.6'], remoteDir: 'relative/dir' })).rejects.toThrow(/remoteDir: the remote directory must start with ~\//);
    } finally {
      api.close();
      env.restore();
    }
  });
});
