import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { fingerprintOf } from '../../engine/node/deploy/ssh/fingerprint.js';
import { parseKnownHosts } from '../../engine/node/deploy/ssh/knownHosts.js';
import { mapBounded } from '../../engine/node/deploy/ssh/mapBounded.js';
import { parseProbeOutput } from '../../engine/node/deploy/ssh/preflightProbe.js';
import { parseHostSpec } from '../../engine/node/hosts/host.js';
import { parseSshConfigFile, splitConfigLine } from '../../engine/node/hosts/sshConfigParse.js';
import { concreteHostNames, hostFromSshConfig, resolveSshConfig } from '../../engine/node/hosts/sshConfigResolve.js';
import { useTempHome } from '../support/homes.js';

/**
 * The pure parsers behind the SSH integration tests (ssh config, known_hosts, the preflight probe):
 * no server needed, but kept beside the tests that use them on real files.
 */

let home: string;
let restoreHome: () => void;

beforeAll(() => {
  ({ home, restore: restoreHome } = useTempHome());
  mkdirSync(join(home, '.ssh', 'conf.d'), { recursive: true });
});

afterAll(() => restoreHome());

function config(text: string, extra: Record<string, string> = {}) {
  for (const [name, body] of Object.entries(extra)) writeFileSync(join(home, '.ssh', name), body);
  const file = join(home, '.ssh', 'config');
  writeFileSync(file, text);
  return parseSshConfigFile(file);
}

describe('ssh config', () => {
  test('keyword forms: spaces, =, quotes', () => {
    expect(splitConfigLine('Port=2222')).toEqual(['Port', '2222']);
    expect(splitConfigLine('Port = 2222')).toEqual(['Port', '2222']);
    expect(splitConfigLine('Port =2222')).toEqual(['Port', '2222']);
    expect(splitConfigLine('IdentityFile "~/.ssh/my key"')).toEqual(['IdentityFile', '~/.ssh/my key']);
  });

  test('first value wins, IdentityFile accumulates, patterns and negation, %h and ~ expand', () => {
    const d = config(
      [
        'Host web1 web2',
        '  HostName %h.example.org',
        '  Port 2200',
        '  IdentityFile ~/.ssh/web_%r',
        'Host * !web2',
        '  User deploy',
        'Host *',
        '  User other',
        '  Port 22',
        '  IdentityFile %d/.ssh/id_all',
        'Match host web1 exec "true"',
        '  User frommatch',
        '',
      ].join('\n'),
    );
    expect(concreteHostNames(d)).toEqual(['web1', 'web2']);
    const w1 = resolveSshConfig(d, 'web1');
    expect(w1).toMatchObject({ hostName: 'web1.example.org', port: 2200, user: 'deploy' });
    expect(w1.identityFiles).toEqual([join(home, '.ssh', 'web_deploy'), join(home, '.ssh', 'id_all')]);
    expect(resolveSshConfig(d, 'web2').user).toBe('other');
  });

  test('Include with a glob, relative to ~/.ssh; an Include inside a Host block applies to that block only', () => {
    const d = config(['Host gpu', '  Include gpu.inc', 'Include conf.d/*.conf', ''].join('\n'), {
      'gpu.inc': 'HostName 10.0.0.9\nUser trainer\n',
      'conf.d/a.conf': 'Host a\n  HostName 10.0.0.1\n',
      'conf.d/b.conf': 'Host b\n  HostName 10.0.0.2\n',
      'conf.d/skip.txt': 'Host notincluded\n',
    });
    expect(concreteHostNames(d)).toEqual(['gpu', 'a', 'b']);
    expect(resolveSshConfig(d, 'gpu')).toMatchObject({ hostName: '10.0.0.9', user: 'trainer' });
    expect(resolveSshConfig(d, 'a')).toMatchObject({ hostName: '10.0.0.1' });
    expect(resolveSshConfig(d, 'a').user).not.toBe('trainer');
  });

  test('ProxyJump chains resolve each hop through the config; explicit user and port win; loops are errors', () => {
    const d = config(
      [
        'Host edge',
        '  HostName 192.0.2.1',
        '  User jumper',
        'Host bastion',
        '  HostName 10.1.0.1',
        '  Port 2022',
        '  ProxyJump edge',
        'Host node',
        '  HostName 10.1.0.7',
        '  ProxyJump bastion,ops@10.1.0.2:2200',
        'Host legacy',
        '  ProxyCommand ssh -W %h:%p gate',
        'Host loop1',
        '  ProxyJump loop2',
        'Host loop2',
        '  ProxyJump loop1',
        '',
      ].join('\n'),
    );
    const { host } = hostFromSshConfig(d, 'node');
    expect(host.jump.map((j) => `${j.user}@${j.address}:${j.port}`)).toEqual([
      `jumper@192.0.2.1:22`,
      `${host.user}@10.1.0.1:2022`,
      'ops@10.1.0.2:2200',
    ]);
    expect(hostFromSshConfig(d, 'legacy').warnings[0]).toContain('ProxyCommand is not supported');
    expect(() => hostFromSshConfig(d, 'loop1')).toThrow(/ProxyJump loop/);
  });

  test('host specs', () => {
    expect(parseHostSpec('alice@10.0.0.5:2222', 'me')).toEqual({ user: 'alice', address: '10.0.0.5', port: 2222 });
    expect(parseHostSpec('[::1]:22', 'me')).toEqual({ user: 'me', address: '::1', port: 22 });
    expect(() => parseHostSpec('a@b:c:d', 'me')).toThrow(/user@address\[:port\]/);
  });
});

describe('known_hosts', () => {
  const key = Buffer.concat([Buffer.from([0, 0, 0, 11]), Buffer.from('ssh-ed25519'), Buffer.from([0, 0, 0, 32]), Buffer.alloc(32, 7)]);
  const b64 = key.toString('base64');

  test('patterns, ports, negation, markers and comments', () => {
    const entries = parseKnownHosts(
      [
        '# comment',
        `*.lab,!bad.lab ssh-ed25519 ${b64}`,
        `[10.0.0.5]:2222 ssh-ed25519 ${b64} note`,
        `@cert-authority *.corp ssh-ed25519 ${b64}`,
        `@revoked old.example ssh-ed25519 ${b64}`,
        'garbage',
      ].join('\n'),
      'kh',
    );
    expect(entries).toHaveLength(3);
    expect(entries[0].matches('gpu1.lab')).toBe(true);
    expect(entries[0].matches('bad.lab')).toBe(false);
    expect(entries[1].matches('[10.0.0.5]:2222')).toBe(true);
    expect(entries[1].matches('10.0.0.5')).toBe(false);
    expect(entries[2]).toMatchObject({ marker: 'revoked', line: 5 });
    expect(entries.some((e) => e.matches('x.corp'))).toBe(false);
  });

  test('fingerprints are unpadded base64 of sha256', () => {
    expect(fingerprintOf(key)).toMatch(/^SHA256:[A-Za-z0-9+/]{43}$/);
  });
});

describe('bounded parallelism', () => {
  test('never runs more than the bound at once, keeps input order, and finishes every item despite a failure', async () => {
    let running = 0;
    let peak = 0;
    const finished: number[] = [];
    const work = async (n: number) => {
      running++;
      peak = Math.max(peak, running);
      await new Promise((r) => setImmediate(r));
      running--;
      finished.push(n);
      if (n === 3) throw new Error('item 3 failed');
      return n * 10;
    };
    await expect(mapBounded([1, 2, 3, 4, 5, 6, 7], 3, work)).rejects.toThrow('item 3 failed');
    expect(peak).toBe(3);
    expect(finished.sort()).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(await mapBounded([1, 2, 4], 8, work)).toEqual([10, 20, 40]);
  });
});

describe('preflight probe output', () => {
  test('parses every section and tolerates missing tools', () => {
    const facts = parseProbeOutput(
      [
        '@@uname', 'Linux aarch64', '@@ncpu', '64', '@@cpumodel', 'Neoverse-V2', '@@mem', 'MemTotal:       527756404 kB', 'MemAvailable:   500000000 kB',
        '@@home', '/home/u', '@@disk', '/dev/nvme0n1p2 1921724676 4 1000 1% /', '@@node', '/usr/bin/node', 'v18.19.0',
        '@@gpu', '0, NVIDIA H200, 143771 MiB, GPU-0f3a, 550.54.15', '1, NVIDIA H200, 143771 MiB, GPU-77c1, 550.54.15', 'rc=0', '@@cudalibs', 'libcudart.so.12', '@@port', 'error EACCES', '@@portrange', '@@end',
      ].join('\n'),
    );
    expect(facts).toMatchObject({ os: 'Linux', arch: 'aarch64', cpus: 64, diskFreeBytes: 1000 * 1024, node: { version: 'v18.19.0' }, complete: true });
    expect(facts.gpus).toEqual([
      { index: 0, name: 'NVIDIA H200', memoryBytes: 143771 * 1024 * 1024, uuid: 'GPU-0f3a', driver: '550.54.15' },
      { index: 1, name: 'NVIDIA H200', memoryBytes: 143771 * 1024 * 1024, uuid: 'GPU-77c1', driver: '550.54.15' },
    ]);
    expect(facts.cudaLibs).toEqual(['libcudart.so.12']);
    expect(facts.port).toEqual({ ok: false, error: 'EACCES' });
    expect(parseProbeOutput('@@uname\nLinux x86_64\n@@gpu\nNVIDIA-SMI has failed because it could not communicate with the NVIDIA driver.\nrc=9\n@@end').gpuError).toContain('NVIDIA driver');
  });
});
