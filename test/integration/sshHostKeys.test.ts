import { execFileSync } from 'node:child_process';
import { appendFileSync, existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { connectHost, type TrustRequest } from '../../engine/node/deploy/ssh/connectHost.js';
import { SshConnectError } from '../../engine/node/deploy/ssh/sshErrors.js';
import type { SshHost } from '../../engine/node/hosts/host.js';
import { makeUserKey, startHostPair, startSshd, stopAllSshd, type PrivateSshd, type UserKey } from '../support/sshd.js';
import { useTempHome } from '../support/homes.js';

/** Host key verification against real OpenSSH servers: unknown, trusted, changed, hashed, revoked. */

let env: ReturnType<typeof useTempHome>;
let key: UserKey;
let a: PrivateSshd;
let b: PrivateSshd;

beforeAll(async () => {
  env = useTempHome();
  key = makeUserKey(join(env.home, 'keys'), 'id_test');
  [a, b] = await startHostPair([key.publicKey]);
});

afterAll(async () => {
  await stopAllSshd();
  env?.restore();
});

const hostOf = (s: PrivateSshd): SshHost => ({ alias: s.address, address: s.address, port: s.port, user: s.user, identityFiles: [key.path], useAgent: false, jump: [] });
const shoalStore = () => join(env.configDir, 'known_hosts');

async function refusal(promise: Promise<unknown>): Promise<SshConnectError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(SshConnectError);
  return err as SshConnectError;
}

describe('host keys', () => {
  test('an unknown key asks with the fingerprint ssh-keygen prints; refusing fails clearly and records nothing', async () => {
    const asked: TrustRequest[] = [];
    const err = await refusal(connectHost(hostOf(a), { trustRequest: (r) => (asked.push(r), false) }));
    expect(asked).toHaveLength(1);
    expect(asked[0]).toMatchObject({ address: '127.0.0.2', port: a.port, keyType: 'ssh-ed25519', fingerprint: a.hostFingerprint() });
    expect(err.kind).toBe('host-key-untrusted');
    expect(err.message).toContain(`127.0.0.2:${a.port}`);
    expect(err.message).toContain(a.hostFingerprint());
    expect(err.message).toContain('--trust-new');
    expect(existsSync(shoalStore())).toBe(false);
    // Without a trustRequest at all, an unknown key is refused the same way.
    expect((await refusal(connectHost(hostOf(a)))).kind).toBe('host-key-untrusted');
  });

  test('a trusted key is stored (mode 600) and then accepted without asking', async () => {
    const conn = await connectHost(hostOf(a), { trustRequest: () => true });
    expect(conn.hostKey).toEqual({ keyType: 'ssh-ed25519', fingerprint: a.hostFingerprint(), newlyTrusted: true });
    conn.close();
    const stored = readFileSync(shoalStore(), 'utf8');
    expect(stored).toContain(`[127.0.0.2]:${a.port} ssh-ed25519 `);
    expect(stored).not.toMatch(/PRIVATE KEY/);
    expect(statSync(shoalStore()).mode & 0o777).toBe(0o600);
    // OpenSSH reads Shoal's store too: it is a valid known_hosts file.
    expect(execFileSync('ssh-keygen', ['-F', `[127.0.0.2]:${a.port}`, '-f', shoalStore()], { encoding: 'utf8' })).toContain('ssh-ed25519');

    let askedAgain = false;
    const again = await connectHost(hostOf(a), { trustRequest: () => (askedAgain = true) });
    expect(again.hostKey.newlyTrusted).toBe(false);
    again.close();
    expect(askedAgain).toBe(false);
  });

  test('a CHANGED host key is refused with old and new fingerprints, even when new keys are trusted automatically', async () => {
    const oldFingerprint = a.hostFingerprint();
    const before = readFileSync(shoalStore(), 'utf8');
    await a.restart({ newHostKey: true });
    const newFingerprint = a.hostFingerprint();
    expect(newFingerprint).not.toBe(oldFingerprint);
    let asked = false;
    const err = await refusal(connectHost(hostOf(a), { trustRequest: () => (asked = true) }));
    expect(asked).toBe(false);
    expect(err.kind).toBe('host-key-changed');
    expect(err.message).toContain('CHANGED');
    expect(err.message).toContain(`127.0.0.2:${a.port}`);
    expect(err.message).toContain(oldFingerprint);
    expect(err.message).toContain(newFingerprint);
    expect(err.message).toContain(`ssh-keygen -R '[127.0.0.2]:${a.port}' -f ${shoalStore()}`);
    expect(readFileSync(shoalStore(), 'utf8')).toBe(before);

    // Following the advice (remove the old entry) lets the user trust the new key.
    execFileSync('ssh-keygen', ['-q', '-R', `[127.0.0.2]:${a.port}`, '-f', shoalStore()], { stdio: 'ignore' });
    const conn = await connectHost(hostOf(a), { trustRequest: () => true });
    expect(conn.hostKey.fingerprint).toBe(newFingerprint);
    conn.close();
  });

  test("a hashed entry in the user's ~/.ssh/known_hosts is recognised", async () => {
    const userKnownHosts = join(env.home, '.ssh', 'known_hosts');
    const [type, body] = readFileSync(b.hostKeyPub, 'utf8').trim().split(' ');
    writeFileSync(userKnownHosts, `[127.0.0.3]:${b.port} ${type} ${body}\n`);
    execFileSync('ssh-keygen', ['-q', '-H', '-f', userKnownHosts], { stdio: 'ignore' });
    const hashed = readFileSync(userKnownHosts, 'utf8');
    expect(hashed.startsWith('|1|')).toBe(true);
    expect(hashed).not.toContain('127.0.0.3');
    const conn = await connectHost(hostOf(b));
    expect(conn.hostKey).toMatchObject({ fingerprint: b.hostFingerprint(), newlyTrusted: false });
    conn.close();
  });

  test('a host that shows a key of another type than the recorded one is treated as changed', async () => {
    const c = await startSshd({ address: '127.0.0.4', authorizedKeys: [key.publicKey] });
    const recorded = join(env.home, 'keys', 'recorded_ecdsa');
    execFileSync('ssh-keygen', ['-q', '-t', 'ecdsa', '-N', '', '-f', recorded]);
    const [type, body] = readFileSync(`${recorded}.pub`, 'utf8').trim().split(' ');
    appendFileSync(join(env.home, '.ssh', 'known_hosts'), `[127.0.0.4]:${c.port} ${type} ${body}\n`);
    const err = await refusal(connectHost(hostOf(c), { trustRequest: () => true }));
    expect(err.kind).toBe('host-key-changed');
    expect(err.message).toContain(`recorded:  ecdsa-sha2-nistp256`);
    expect(err.message).toContain(`presented: ssh-ed25519 ${c.hostFingerprint()}`);
    await c.stop();
  });

  test('a key marked @revoked is refused even though it is also recorded', async () => {
    const [type, body] = readFileSync(b.hostKeyPub, 'utf8').trim().split(' ');
    appendFileSync(join(env.home, '.ssh', 'known_hosts'), `@revoked * ${type} ${body}\n`);
    const err = await refusal(connectHost(hostOf(b), { trustRequest: () => true }));
    expect(err.kind).toBe('host-key-revoked');
    expect(err.message).toContain('@revoked');
  });
});
