import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { connectHost } from '../../engine/node/deploy/ssh/connectHost.js';
import { runRemote } from '../../engine/node/deploy/ssh/exec.js';
import { preflightHost, type PreflightEvent } from '../../engine/node/deploy/ssh/preflight.js';
import { SshConnectError } from '../../engine/node/deploy/ssh/sshErrors.js';
import type { SshHost } from '../../engine/node/hosts/host.js';
import { MACHINES, standInUuid } from '../support/gpuStandIns.js';
import { freePort, makeUserKey, standInBin, startSshd, stopAllSshd, type PrivateSshd, type UserKey } from '../support/sshd.js';
import { useTempHome } from '../support/homes.js';

/** Connections, authentication and preflight against a real OpenSSH server on 127.0.0.2. */

let env: ReturnType<typeof useTempHome>;
let sshd: PrivateSshd;
let key: UserKey;
let lockedKey: UserKey;
let strangerKey: UserKey;
const PASSPHRASE = 'correct horse battery staple';

beforeAll(async () => {
  env = useTempHome();
  const keys = join(env.home, 'keys');
  key = makeUserKey(keys, 'id_test');
  lockedKey = makeUserKey(keys, 'id_locked', PASSPHRASE);
  strangerKey = makeUserKey(keys, 'id_stranger');
  sshd = await startSshd({ address: '127.0.0.2', authorizedKeys: [key.publicKey, lockedKey.publicKey] });
});

afterAll(async () => {
  await stopAllSshd();
  env?.restore();
});

const hostWith = (over: Partial<SshHost> = {}): SshHost => ({
  alias: 'a',
  address: sshd.address,
  port: sshd.port,
  user: sshd.user,
  identityFiles: [key.path],
  useAgent: false,
  jump: [],
  ...over,
});

/** Tests here are about authentication, not host keys: trust whatever key the server shows. */
const trusting = { trustRequest: () => true };

async function connectError(promise: Promise<unknown>): Promise<SshConnectError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(SshConnectError);
  return err as SshConnectError;
}

describe('connect and preflight', () => {
  test('preflight succeeds and reports OS, architecture, CPUs, memory, disk, Node, GPUs, ports and clock', async () => {
    const events: PreflightEvent[] = [];
    const result = await preflightHost(hostWith(), { trustRequest: () => true, onProgress: (e) => events.push(e) });
    expect(result.error).toBeUndefined();
    expect(result.ok).toBe(true);
    const [os, arch] = execFileSync('uname', ['-sm'], { encoding: 'utf8' }).trim().split(' ');
    expect(result.facts?.os).toBe(os);
    expect(result.facts?.arch).toBe(arch);
    expect(result.facts?.node?.version).toBe(process.version);
    expect(result.facts?.cpus).toBeGreaterThan(0);
    expect(result.facts?.memoryBytes).toBeGreaterThan(0);
    expect(result.facts?.diskFreeBytes).toBeGreaterThan(0);
    expect(result.facts?.port).toMatchObject({ ok: true });
    // This machine has no nvidia-smi: no GPUs is a fact, not a failure.
    if (!existsSync('/usr/bin/nvidia-smi')) expect(result.steps.find((s) => s.step === 'gpu')).toMatchObject({ status: 'ok', detail: 'none (no nvidia-smi): agents run on the CPU' });
    // Same machine, same clock: the estimate must contain zero.
    expect(Math.abs(result.clock!.skewMs)).toBeLessThanOrEqual(result.clock!.uncertaintyMs + 1);
    expect(result.steps.map((s) => s.step)).toEqual(['reachable', 'hostKey', 'authenticated', 'os', 'cpu', 'memory', 'disk', 'node', 'gpu', 'ports', 'clock']);
    expect(events[0]).toMatchObject({ host: 'a', step: 'reachable', status: 'running' });
    expect(events.every((e) => e.host === 'a')).toBe(true);
  });

  test('old Node fails with a fix hint; GPUs from nvidia-smi are listed (stand-ins on the PATH of a second host)', async () => {
    // node --version says 18; anything else runs the real Node, so the port check still binds for real.
    const bin = standInBin(join(env.home, 'fake-bin'), { nodeVersion: 'v18.19.0', machine: MACHINES.cuda12Only });
    const gpuHost = await startSshd({ address: '127.0.0.3', authorizedKeys: [key.publicKey], pathPrefix: [bin] });
    const result = await preflightHost(hostWith({ address: gpuHost.address, port: gpuHost.port }), trusting);
    expect(result.ok).toBe(false);
    const node = result.steps.find((s) => s.step === 'node')!;
    expect(node.status).toBe('fail');
    expect(node.detail).toContain('v18.19.0');
    expect(node.detail).toMatch(/Install Node 20/);
    expect(result.facts?.gpus).toEqual([0, 1].map((index) => ({ index, name: 'NVIDIA H100 80GB HBM3', memoryBytes: 81559 * 2 ** 20, uuid: standInUuid(index), driver: '550.54.15' })));
    // CUDA 12 alone: one line that says what tfjs-node-gpu needs and what was found instead.
    const gpu = result.steps.find((s) => s.step === 'gpu')!;
    expect(gpu.status).toBe('warn');
    expect(gpu.detail).toContain('no libcudart.so.11.0, libcublas.so.11, libcudnn.so.8 (found only libcublas.so.12, libcudart.so.12, libcudnn.so.9)');
    expect(gpu.detail).toContain('--allow-cpu-fallback');
    expect(result.steps.find((s) => s.step === 'ports')?.status).toBe('ok');
    await gpuHost.stop();
  });

  test('a user key the host does not accept gives an authentication error naming user and key', async () => {
    const err = await connectError(connectHost(hostWith({ identityFiles: [strangerKey.path] }), trusting));
    expect(err.kind).toBe('auth');
    expect(err.message).toContain(`"${sshd.user}"`);
    expect(err.message).toContain(strangerKey.path);
    expect(err.message).toContain('authorized_keys');
    expect(err.message).toContain('ssh-agent');
  });

  test('a deleted identity file is said to be missing, with its path and what to do (not "refused … ENOENT")', async () => {
    const gone = join(env.home, 'keys', 'id_deleted');
    const err = await connectError(connectHost(hostWith({ identityFiles: [gone] }), trusting));
    expect(err.kind).toBe('key-file');
    expect(err.message).toContain(`The identity file ${gone} configured for ${sshd.user}@127.0.0.2:${sshd.port} does not exist`);
    expect(err.message).toMatch(/Restore the key file, or point the host at a key that exists/);
    expect(err.message).not.toContain('ENOENT');
  });

  test('a port nobody listens on gives a clear unreachable error', async () => {
    const port = await freePort('127.0.0.2');
    const err = await connectError(connectHost(hostWith({ port }), trusting));
    expect(err.kind).toBe('unreachable');
    expect(err.message).toContain(`127.0.0.2:${port}`);
    expect(err.message).toMatch(/host is up/);
    const result = await preflightHost(hostWith({ port }));
    expect(result.ok).toBe(false);
    expect(result.steps).toEqual([expect.objectContaining({ step: 'reachable', status: 'fail' })]);
  });

  test('a server that never answers gives a timeout error; time spent deciding on a host key does not count', async () => {
    const silent = createServer(() => undefined);
    await new Promise<void>((r) => silent.listen(0, '127.0.0.2', r));
    const port = (silent.address() as AddressInfo).port;
    const err = await connectError(connectHost(hostWith({ port }), { ...trusting, timeoutMs: 300 }));
    silent.close();
    expect(err.kind).toBe('timeout');
    expect(err.message).toContain(`No SSH answer from 127.0.0.2:${port} within 300 ms`);

    // A person reading the fingerprint for longer than the timeout still gets connected.
    await sshd.restart({ newHostKey: true });
    rmSync(join(env.configDir, 'known_hosts'), { force: true });
    const slowDecision = () => new Promise<boolean>((r) => setTimeout(() => r(true), 2500));
    const conn = await connectHost(hostWith(), { trustRequest: slowDecision, timeoutMs: 2000 });
    expect(conn.hostKey.newlyTrusted).toBe(true);
    conn.close();
  });

  test('a passphrase-protected key works through the prompt, and the passphrase is never in an error', async () => {
    const asked: string[] = [];
    const conn = await connectHost(hostWith({ identityFiles: [lockedKey.path] }), {
      ...trusting,
      passphrase: (path) => {
        asked.push(path);
        return PASSPHRASE;
      },
    });
    const { stdout } = await runRemote(conn.client, 'echo hello');
    conn.close();
    expect(stdout.trim()).toBe('hello');
    expect(asked).toEqual([lockedKey.path]);

    const wrong = await connectError(connectHost(hostWith({ identityFiles: [lockedKey.path] }), { ...trusting, passphrase: () => 'not it' }));
    expect(wrong.kind).toBe('auth');
    expect(wrong.message).toContain('wrong passphrase');
    expect(wrong.message).not.toContain('not it');
    const none = await connectError(connectHost(hostWith({ identityFiles: [lockedKey.path] }), trusting));
    expect(none.message).toContain('ssh-add');
  });

  test('ssh-agent keys are used when no identity file is given', async () => {
    const sock = join(env.home, 'agent.sock');
    const agent: ChildProcess = spawn('ssh-agent', ['-D', '-a', sock], { stdio: 'ignore' });
    try {
      for (let i = 0; i < 200 && !existsSync(sock); i++) await new Promise((r) => setTimeout(r, 25));
      execFileSync('ssh-add', ['-q', key.path], { env: { ...process.env, SSH_AUTH_SOCK: sock }, stdio: 'ignore' });
      process.env.SSH_AUTH_SOCK = sock;
      const conn = await connectHost(hostWith({ identityFiles: [], useAgent: true }), trusting);
      const { stdout } = await runRemote(conn.client, 'echo via-agent');
      conn.close();
      expect(stdout.trim()).toBe('via-agent');
    } finally {
      delete process.env.SSH_AUTH_SOCK;
      agent.kill();
    }
  });
});
