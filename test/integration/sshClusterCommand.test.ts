import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { HostPreflight } from '../../engine/node/deploy/ssh/preflight.js';
import { runClusterCommand } from '../../engine/node/commands/cluster.js';
import type { SshCluster } from '../../engine/node/hosts/clusterStore.js';
import { freePort, makeUserKey, startHostPair, stopAllSshd, type PrivateSshd } from '../support/sshd.js';
import { useTempHome } from '../support/homes.js';
import { runCommand } from '../support/commandRun.js';

/** `shoal cluster add|import|test|list`, called as the CLI will call it, against real sshd servers. */

let env: ReturnType<typeof useTempHome>;
let bastion: PrivateSshd;
let inner: PrivateSshd;

beforeAll(async () => {
  env = useTempHome();
  // The key sits where OpenSSH users keep it, and the config refers to it with ~.
  const key = makeUserKey(join(env.home, '.ssh'), 'id_lab');
  [bastion, inner] = await startHostPair([key.publicKey]);
  mkdirSync(join(env.home, '.ssh', 'config.d'));
  writeFileSync(
    join(env.home, '.ssh', 'config'),
    ['# lab machines', 'Include config.d/*.conf', '', 'Host *', `    User ${bastion.user}`, '    IdentityFile ~/.ssh/id_lab', ''].join('\n'),
  );
  writeFileSync(
    join(env.home, '.ssh', 'config.d', '10-lab.conf'),
    [
      'Host bastion',
      '    HostName 127.0.0.2',
      `    Port ${bastion.port}`,
      'Host inner trainer-*',
      '    HostName=127.0.0.3',
      `    Port ${inner.port}`,
      '    ProxyJump bastion',
      '',
    ].join('\n'),
  );
});

afterAll(async () => {
  await stopAllSshd();
  env?.restore();
});

const run = (...args: string[]) => runCommand(runClusterCommand, ...args);

describe('shoal cluster', () => {
  test('import from ~/.ssh/config follows Include and ProxyJump, skips wildcard patterns, stores paths only', async () => {
    const r = await run('import', '--name', 'lab');
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(r.out).toContain(`inner  ${bastion.user}@127.0.0.3:${inner.port} via ${bastion.user}@127.0.0.2:${bastion.port}`);
    const [lab] = JSON.parse((await run('list', '--json')).out) as SshCluster[];
    expect(lab.hosts.map((h) => h.alias)).toEqual(['bastion', 'inner']);
    const innerHost = lab.hosts[1];
    expect(innerHost).toMatchObject({ address: '127.0.0.3', port: inner.port, identityFiles: [join(env.home, '.ssh', 'id_lab')] });
    expect(innerHost.jump).toEqual([{ address: '127.0.0.2', port: bastion.port, user: bastion.user, identityFiles: [join(env.home, '.ssh', 'id_lab')] }]);
    const file = join(env.configDir, 'clusters.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readFileSync(file, 'utf8')).not.toContain('PRIVATE KEY');
  });

  test('test without --trust-new refuses unknown host keys (no terminal to ask) and says what to do', async () => {
    const r = await run('test', 'lab');
    expect(r.code).toBe(1);
    expect(r.err).toContain('--trust-new');
    expect(r.out).toContain('0 of 2 hosts ready');
  });

  test('test --trust-new --json checks every host, the inner one through the jump host', async () => {
    const r = await run('test', 'lab', '--trust-new', '--no-survey', '--json');
    expect(r.code).toBe(0);
    const report = JSON.parse(r.out) as { ok: boolean; hosts: HostPreflight[] };
    expect(report.ok).toBe(true);
    expect(report.hosts.map((h) => h.facts?.node?.version)).toEqual([process.version, process.version]);
    expect(r.err).toMatch(/inner\s+reachable\s+ok\s+\S+ via /);
    expect(r.err).toContain(inner.hostFingerprint());
    // The bastion's key is met twice (as a host and as the jump to inner) but trusted and stored once.
    expect(r.err.split(`Trusting the new host key of ${bastion.user}@127.0.0.2:`).length - 1).toBe(1);
    expect(readFileSync(join(env.configDir, 'known_hosts'), 'utf8').trim().split('\n')).toHaveLength(2);
  });

  test('a changed host key fails the test even with --trust-new, with a warning naming the host', async () => {
    const oldFingerprint = inner.hostFingerprint();
    await inner.restart({ newHostKey: true });
    const r = await run('test', 'lab', '--trust-new');
    expect(r.code).toBe(1);
    expect(r.err).toContain(`host key of 127.0.0.3:${inner.port} has CHANGED`);
    expect(r.err).toContain(oldFingerprint);
    expect(r.err).toContain(inner.hostFingerprint());
    expect(r.out).toContain('1 of 2 hosts ready');
    expect(r.out).toMatch(/✗ inner .*hostKey: WARNING/);
  });

  test('add: one host up and one down; test reports each, exits 1, and lists the cluster', async () => {
    const downPort = await freePort('127.0.0.4');
    const add = await run('add', 'pair', '--host', `${bastion.user}@127.0.0.2:${bastion.port}`, '--host', `${bastion.user}@127.0.0.4:${downPort}`, '--identity', '~/.ssh/id_lab');
    expect(add.code).toBe(0);
    const r = await run('test', 'pair', '--trust-new', '--no-survey');
    expect(r.code).toBe(1);
    expect(r.out).toContain('1 of 2 hosts ready');
    expect(r.out).toMatch(/✓ 127\.0\.0\.2 .*Node v\d+/);
    expect(r.out).toMatch(new RegExp(`✗ 127\\.0\\.0\\.4 .*127\\.0\\.0\\.4:${downPort}: connection refused`));
    const list = await run('list');
    expect(list.out).toContain('pair\n');
    expect(list.out).toContain(`127.0.0.4  ${bastion.user}@127.0.0.4:${downPort}`);
  });

  test('bad input gets a clear error and changes nothing', async () => {
    const before = readFileSync(join(env.configDir, 'clusters.json'), 'utf8');
    expect((await run('add', 'x', '--host', 'me@host:99999')).err).toContain('port 99999');
    expect((await run('add', 'x', '--host', 'me@h', '--identity', '/nope/key')).err).toContain('/nope/key does not exist');
    expect((await run('import', '--name', 'y', '--hosts', 'nosuch')).err).toContain('No Host entry');
    expect((await run('test', 'missing')).err).toContain('No cluster "missing". Clusters: lab, pair.');
    expect((await run('frobnicate')).code).toBe(2);
    expect(readFileSync(join(env.configDir, 'clusters.json'), 'utf8')).toBe(before);
  });
});
