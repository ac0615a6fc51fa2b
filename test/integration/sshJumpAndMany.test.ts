import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { connectHost, type TrustRequest } from '../../engine/node/deploy/ssh/connectHost.js';
import { runRemote } from '../../engine/node/deploy/ssh/exec.js';
import { preflightHosts, type PreflightEvent } from '../../engine/node/deploy/ssh/preflight.js';
import { SshConnectError } from '../../engine/node/deploy/ssh/sshErrors.js';
import type { JumpHop, SshHost } from '../../engine/node/hosts/host.js';
import { freePort, makeUserKey, startHostPair, stopAllSshd, type PrivateSshd, type UserKey } from '../support/sshd.js';
import { useTempHome } from '../support/homes.js';

/** ProxyJump through a second real sshd, and many hosts at once where one is down. */

let env: ReturnType<typeof useTempHome>;
let key: UserKey;
let stranger: UserKey;
let bastion: PrivateSshd;
let inner: PrivateSshd;

beforeAll(async () => {
  env = useTempHome();
  key = makeUserKey(join(env.home, 'keys'), 'id_test');
  stranger = makeUserKey(join(env.home, 'keys'), 'id_stranger');
  [bastion, inner] = await startHostPair([key.publicKey]);
});

afterAll(async () => {
  await stopAllSshd();
  env?.restore();
});

const hop = (s: PrivateSshd, identity = key.path): JumpHop => ({ address: s.address, port: s.port, user: s.user, identityFiles: [identity] });
const hostOf = (s: { address: string; port: number; user: string }, jump: JumpHop[] = [], alias = s.address): SshHost => ({
  alias,
  address: s.address,
  port: s.port,
  user: s.user,
  identityFiles: [key.path],
  useAgent: false,
  jump,
});

async function refusal(promise: Promise<unknown>): Promise<SshConnectError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(SshConnectError);
  return err as SshConnectError;
}

describe('jump hosts', () => {
  test('a host behind a jump host is reached through it, and both host keys are verified', async () => {
    const asked: TrustRequest[] = [];
    const conn = await connectHost(hostOf(inner, [hop(bastion)]), { trustRequest: (r) => (asked.push(r), true) });
    // The target's sshd sees the connection coming from the jump host's side (loopback), over the tunnel.
    const { stdout } = await runRemote(conn.client, 'echo "$SSH_CONNECTION"');
    conn.close();
    expect(stdout.split(' ')[2]).toBe('127.0.0.3');
    expect(asked.map((r) => r.fingerprint)).toEqual([bastion.hostFingerprint(), inner.hostFingerprint()]);
    expect(conn.hostKey.fingerprint).toBe(inner.hostFingerprint());
  });

  test('a target the jump host cannot reach is reported as a jump failure naming both', async () => {
    const down = { address: '127.0.0.3', port: await freePort('127.0.0.3'), user: inner.user };
    const err = await refusal(connectHost(hostOf(down, [hop(bastion)])));
    expect(err.kind).toBe('jump');
    expect(err.where).toBe(`${bastion.user}@127.0.0.2:${bastion.port}`);
    expect(err.message).toContain(`Jump host ${bastion.user}@127.0.0.2:${bastion.port}`);
    expect(err.message).toContain(`127.0.0.3:${down.port}`);
  });

  test('an authentication failure at the jump host says which hop failed', async () => {
    const err = await refusal(connectHost(hostOf(inner, [hop(bastion, stranger.path)])));
    expect(err.kind).toBe('auth');
    expect(err.message).toContain(`Jump host 1 of 1 (${bastion.user}@127.0.0.2:${bastion.port})`);
    expect(err.message).toContain(stranger.path);
  });
});

describe('many hosts', () => {
  test('one host down: the others are checked in full and the down one is reported for itself', async () => {
    const downPort = await freePort('127.0.0.4');
    const hosts = [hostOf(bastion, [], 'up-a'), hostOf({ address: '127.0.0.4', port: downPort, user: bastion.user }, [], 'down'), hostOf(inner, [], 'up-b')];
    const events: PreflightEvent[] = [];
    const results = await preflightHosts(hosts, { concurrency: 2, trustRequest: () => true, onProgress: (e) => events.push(e) });
    expect(results.map((r) => [r.host, r.ok])).toEqual([
      ['up-a', true],
      ['down', false],
      ['up-b', true],
    ]);
    expect(results[1].error?.kind).toBe('unreachable');
    expect(results[1].error?.message).toContain(`127.0.0.4:${downPort}`);
    for (const r of [results[0], results[2]]) expect(r.facts?.node?.version).toBe(process.version);
    expect(events.filter((e) => e.host === 'up-b' && e.step === 'clock' && e.status === 'ok')).toHaveLength(1);
    expect(events.filter((e) => e.host === 'down' && e.status === 'fail').map((e) => e.step)).toEqual(['reachable']);
  });
});
