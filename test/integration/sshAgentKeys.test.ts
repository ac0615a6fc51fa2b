import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectHost } from '../../engine/node/deploy/ssh/connectHost.js';
import { preflightHost } from '../../engine/node/deploy/ssh/preflight.js';
import { SshConnectError } from '../../engine/node/deploy/ssh/sshErrors.js';
import type { SshHost } from '../../engine/node/hosts/host.js';
import { importSshConfig } from '../../engine/node/hosts/sshConfigImport.js';
import { useTempHome } from '../support/homes.js';
import { makeUserKey, startSshd, stopAllSshd, type PrivateSshd, type UserKey } from '../support/sshd.js';

/**
 * What Shoal reads from ssh config means what OpenSSH means by it, against real OpenSSH
 * (sshd on loopback, ssh-agent holding seven keys, `ssh -G` as the reference resolver):
 * IdentitiesOnly, IdentityAgent, User, Port, ProxyJump, Include and Match host / originalhost; and a
 * refusal of keys is reported as authentication, naming the keys, never as reachability.
 */
let env: ReturnType<typeof useTempHome>;
let target: PrivateSshd;
let bastion: PrivateSshd;
let agent: ChildProcess;
let agentSock: string;
let good: UserKey;
let refusedKey: UserKey;
let configFile: string;
const PASSPHRASE = 'only the agent knows';
const trusting = { trustRequest: () => true, timeoutMs: 20_000 };

async function startAgent(dir: string): Promise<void> {
  agentSock = join(dir, 'agent.sock');
  // -D: in the foreground, so the test owns the process and ends it by its pid.
  agent = spawn('ssh-agent', ['-D', '-a', agentSock], { stdio: 'ignore' });
  for (let i = 0; i < 100 && !existsSync(agentSock); i++) await new Promise((r) => setTimeout(r, 50));
  if (!existsSync(agentSock)) throw new Error('ssh-agent did not create its socket');
}

/** ssh-add a key; an encrypted one gets its passphrase from an askpass script (no terminal here). */
function sshAdd(dir: string, key: UserKey, passphrase?: string): void {
  const askpass = join(dir, 'askpass.sh');
  writeFileSync(askpass, `#!/bin/sh\necho '${passphrase ?? ''}'\n`, { mode: 0o700 });
  execFileSync('ssh-add', [key.path], {
    env: { ...process.env, SSH_AUTH_SOCK: agentSock, SSH_ASKPASS: askpass, SSH_ASKPASS_REQUIRE: 'force', DISPLAY: 'none' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
}

beforeAll(async () => {
  env = useTempHome();
  const keys = join(env.home, 'keys');
  const decoys = Array.from({ length: 6 }, (_, i) => makeUserKey(keys, `id_decoy${i}`));
  // The one authorized key is encrypted and its passphrase is given to nobody but the agent: a
  // connection that succeeds with it was signed by the agent.
  good = makeUserKey(keys, 'id_good', PASSPHRASE);
  refusedKey = makeUserKey(keys, 'id_refused');
  [target, bastion] = await Promise.all([
    startSshd({ address: '127.0.0.2', authorizedKeys: [good.publicKey] }),
    startSshd({ address: '127.0.0.3', authorizedKeys: [good.publicKey] }),
  ]);
  await startAgent(env.home);
  for (const d of decoys) sshAdd(env.home, d);
  sshAdd(env.home, good, PASSPHRASE);
  expect(execFileSync('ssh-add', ['-l'], { env: { ...process.env, SSH_AUTH_SOCK: agentSock } }).toString().trim().split('\n')).toHaveLength(7);

  mkdirSync(join(env.home, '.ssh', 'config.d'), { recursive: true });
  const only = (key: string) => [`  IdentityFile ~/keys/${key}`, '  IdentitiesOnly yes'];
  writeFileSync(
    join(env.home, '.ssh', 'config.d', 'lab.conf'),
    [
      'Host gpu1',
      `  HostName ${target.address}`,
      `  Port ${target.port}`,
      ...only('id_good'),
      'Host gpu-all-keys',
      `  HostName ${target.address}`,
      `  Port ${target.port}`,
      '  IdentityFile ~/keys/id_good',
      'Host gpu-refused',
      `  HostName ${target.address}`,
      `  Port ${target.port}`,
      ...only('id_refused'),
      'Host gpu-no-agent',
      `  HostName ${target.address}`,
      `  Port ${target.port}`,
      '  IdentityAgent none',
      ...only('id_good'),
      'Host gpu-jumped',
      `  HostName ${target.address}`,
      `  Port ${target.port}`,
      '  ProxyJump bastion',
      ...only('id_good'),
      'Host bastion',
      `  HostName ${bastion.address}`,
      `  Port ${bastion.port}`,
      ...only('id_good'),
      '',
    ].join('\n'),
  );
  configFile = join(env.home, '.ssh', 'config');
  writeFileSync(
    configFile,
    [
      // Absolute: ssh resolves a relative Include against the passwd home, not $HOME.
      `Include ${join(env.home, '.ssh', 'config.d')}/*.conf`,
      // The right user comes only from Match blocks; were they ignored, `Host *` would give a wrong one.
      `Match host ${target.address}`,
      `  User ${target.user}`,
      'Match originalhost bastion',
      `  User ${bastion.user}`,
      'Host *',
      '  User nobody-from-host-star',
      `  IdentityAgent ${agentSock}`,
      '',
    ].join('\n'),
  );
});

afterAll(async () => {
  agent?.kill();
  await stopAllSshd();
  env?.restore();
});

const hostsByAlias = () => new Map(importSshConfig({ file: configFile }).hosts.map((h) => [h.alias, h]));

async function connectError(host: SshHost): Promise<SshConnectError> {
  const err = await connectHost(host, trusting).then(
    (c) => (c.close(), undefined),
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(SshConnectError);
  return err as SshConnectError;
}

/** `ssh -G` (OpenSSH's own resolution) for the fields Shoal reads. */
function sshG(alias: string): Record<string, string> {
  const out = execFileSync('ssh', ['-G', '-F', configFile, alias], { stdio: ['ignore', 'pipe', 'ignore'] }).toString();
  return Object.fromEntries(out.trim().split('\n').map((l) => [l.slice(0, l.indexOf(' ')), l.slice(l.indexOf(' ') + 1)]));
}

describe('ssh config as OpenSSH reads it', () => {
  it('HostName, User (from Match host / originalhost), Port, IdentitiesOnly, IdentityAgent and ProxyJump agree with ssh -G', () => {
    const hosts = hostsByAlias();
    expect([...hosts.keys()]).toEqual(['gpu1', 'gpu-all-keys', 'gpu-refused', 'gpu-no-agent', 'gpu-jumped', 'bastion']);
    for (const [alias, host] of hosts) {
      const g = sshG(alias);
      expect({ alias, address: host.address, user: host.user, port: host.port, identitiesOnly: host.identitiesOnly ?? false }).toEqual({
        alias,
        address: g.hostname,
        user: g.user,
        port: Number(g.port),
        identitiesOnly: g.identitiesonly === 'yes',
      });
      if (g.identityagent === 'none') expect(host.useAgent, alias).toBe(false);
      else expect(host.identityAgent, alias).toBe(g.identityagent);
      expect(host.jump.map((j) => j.address), alias).toEqual(g.proxyjump ? [bastion.address] : []);
    }
    expect(hosts.get('gpu1')!.user).toBe(target.user);
    expect(hosts.get('gpu-jumped')!.jump[0]).toMatchObject({ user: bastion.user, port: bastion.port, identitiesOnly: true, identityAgent: agentSock });
  });

  it('IdentitiesOnly + IdentityAgent: of seven agent keys only the configured one is offered, and it logs in', async () => {
    const conn = await connectHost(hostsByAlias().get('gpu1')!, trusting);
    conn.close();
  });

  it('ProxyJump through a bastion resolved from the same config, both hops on the agent with IdentitiesOnly', async () => {
    const conn = await connectHost(hostsByAlias().get('gpu-jumped')!, trusting);
    conn.close();
  });

  it('without IdentitiesOnly the agent offers all seven keys: "Too many authentication failures" is an authentication failure that says what to set', async () => {
    const host = hostsByAlias().get('gpu-all-keys')!;
    const err = await connectError(host);
    expect(err.kind).toBe('auth');
    expect(err.message).toMatch(/refused every key offered .*Too many authentication failures/);
    expect(err.message).toMatch(/id_decoy0.*id_decoy5/);
    expect(err.message).toMatch(/IdentityFile\/IdentitiesOnly/);
    // Preflight files it under authentication, after a successful reachability step.
    const report = await preflightHost(host, trusting);
    expect(report.steps.find((s) => s.step === 'reachable')?.status).toBe('ok');
    expect(report.steps.find((s) => s.step === 'authenticated')?.status).toBe('fail');
  });

  it('a key the host does not accept: the refusal names it, and that the agent offered none of its seven', async () => {
    const err = await connectError(hostsByAlias().get('gpu-refused')!);
    expect(err.kind).toBe('auth');
    expect(err.message).toContain(`refused the keys offered for user "${target.user}"`);
    expect(err.message).toContain(`ssh-agent ${agentSock}: none of the 7 it holds (IdentitiesOnly)`);
    expect(err.message).toContain(refusedKey.path);
    expect(err.message).toMatch(/check IdentityFile\/IdentitiesOnly/i);
  });

  it('IdentityAgent none: the agent is not asked, so the encrypted key cannot be used', async () => {
    const err = await connectError(hostsByAlias().get('gpu-no-agent')!);
    expect(err.kind).toBe('auth');
    expect(err.message).not.toContain(`ssh-agent ${agentSock}`);
    expect(err.message).toContain(`${good.path} (encrypted`);
  });
});
