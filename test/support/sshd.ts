import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { dirname, join } from 'node:path';
import type { SshHost } from '../../engine/node/hosts/host.js';
import { writeGpuStandIns, type StandInMachine } from './gpuStandIns.js';
import { hostHome } from './homes.js';

/**
 * Private OpenSSH servers for tests: one `sshd -D` per simulated host on 127.0.0.2, .3 …, each with its
 * own config, host key and authorized_keys in a temporary directory. The system sshd is never touched.
 * Every started server is stopped by stopAllSshd() (call it in afterAll) and, as a last resort, when
 * the test process exits.
 */

export interface UserKey {
  path: string;
  publicKey: string;
}

export interface PrivateSshd {
  address: string;
  port: number;
  dir: string;
  /** The login user: whoever runs the tests (sshd can only switch users as root). */
  user: string;
  hostKeyPub: string;
  /** `ssh-keygen -l -f host key` as printed: the fingerprint field. */
  hostFingerprint(): string;
  /** Stop and start again on the same address and port; with newHostKey, as a reinstalled host. */
  restart(options?: { newHostKey?: boolean }): Promise<void>;
  stop(): Promise<void>;
}

const running = new Set<ChildProcess>();
process.on('exit', () => running.forEach((p) => p.kill('SIGKILL')));

/** A new ed25519 key pair; with a passphrase, an encrypted one. */
export function makeUserKey(dir: string, name: string, passphrase = ''): UserKey {
  const path = join(dir, name);
  mkdirSync(dir, { recursive: true });
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', passphrase, '-C', name, '-f', path]);
  return { path, publicKey: readFileSync(`${path}.pub`, 'utf8').trim() };
}

/** A port nobody listens on at `address` right now. */
export function freePort(address: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, address, () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

/**
 * `pathPrefix`: directories searched first by sessions (tests put stand-ins for node or nvidia-smi there
 * to play a host with old Node or GPUs). `home`: $HOME of sessions, so each simulated host has a disk
 * of its own (~/.shoal) and the real user's home is never written; SFTP still starts in the account's home.
 */
export async function startSshd(options: { address: string; authorizedKeys: string[]; port?: number; pathPrefix?: string[]; home?: string }): Promise<PrivateSshd> {
  const dir = mkdtempSync(join(tmpdir(), `shoal-sshd-${options.address}-`));
  const port = options.port ?? (await freePort(options.address));
  const hostKey = join(dir, 'host_ed25519');
  const newHostKey = () => {
    rmSync(hostKey, { force: true });
    rmSync(`${hostKey}.pub`, { force: true });
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', `host-${options.address}`, '-f', hostKey]);
  };
  newHostKey();
  writeFileSync(join(dir, 'authorized_keys'), options.authorizedKeys.join('\n') + '\n');
  const config = join(dir, 'sshd_config');
  writeFileSync(
    config,
    [
      `Port ${port}`,
      `ListenAddress ${options.address}`,
      `HostKey ${hostKey}`,
      `PidFile ${join(dir, 'sshd.pid')}`,
      `AuthorizedKeysFile ${join(dir, 'authorized_keys')}`,
      'PasswordAuthentication no',
      'KbdInteractiveAuthentication no',
      'UsePAM no',
      'PermitRootLogin prohibit-password',
      // Keys live under /tmp (mode 1777), which StrictModes rejects.
      'StrictModes no',
      'AllowTcpForwarding yes',
      'Subsystem sftp internal-sftp',
      // Sessions get sshd's compiled-in PATH; make sure they find the Node that runs the tests.
      `SetEnv PATH=${[...(options.pathPrefix ?? []), dirname(process.execPath), '/usr/local/bin', '/usr/bin', '/bin'].join(':')}${options.home ? ` HOME=${options.home}` : ''}`,
      '',
    ].join('\n'),
  );
  try {
    // sshd refuses to start without its privilege-separation directory.
    mkdirSync('/run/sshd', { recursive: true, mode: 0o755 });
  } catch {
    /* not root: sshd runs without privilege separation for the current user */
  }
  execFileSync('/usr/sbin/sshd', ['-t', '-f', config]);

  let child: ChildProcess | undefined;
  const start = async () => {
    const log = join(dir, 'sshd.log');
    const p = spawn('/usr/sbin/sshd', ['-D', '-f', config, '-E', log], { stdio: 'ignore' });
    running.add(p);
    // If the test process dies without running its hooks (killed worker), the pipe to this watchdog
    // closes and it stops the server: no sshd outlives the tests.
    const watchdog = spawn('sh', ['-c', `cat >/dev/null; kill ${p.pid} 2>/dev/null`], { stdio: ['pipe', 'ignore', 'ignore'] });
    watchdog.unref();
    (watchdog.stdin as unknown as { unref(): void }).unref();
    p.once('exit', () => {
      running.delete(p);
      watchdog.stdin?.destroy();
    });
    child = p;
    await waitForBanner(options.address, port, p, log);
  };
  const stop = async () => {
    const p = child;
    child = undefined;
    if (!p || p.exitCode !== null || p.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      p.once('exit', () => resolve());
      p.kill('SIGTERM');
    });
  };
  await start();
  const server: PrivateSshd = {
    address: options.address,
    port,
    dir,
    user: userInfo().username,
    hostKeyPub: `${hostKey}.pub`,
    hostFingerprint: () => execFileSync('ssh-keygen', ['-l', '-f', `${hostKey}.pub`], { encoding: 'utf8' }).split(' ')[1],
    async restart(o = {}) {
      await stop();
      if (o.newHostKey) newHostKey();
      await start();
    },
    async stop() {
      await stop();
      sshds.delete(server);
      rmSync(dir, { recursive: true, force: true });
    },
  };
  sshds.add(server);
  return server;
}

const sshds = new Set<PrivateSshd>();

export async function stopAllSshd(): Promise<void> {
  await Promise.all([...sshds].map((s) => s.stop()));
}

/** Resolve once the server greets with `SSH-`; fail with its log when it exits first. */
async function waitForBanner(address: string, port: number, p: ChildProcess, log: string): Promise<void> {
  for (let attempt = 0; attempt < 200; attempt++) {
    if (p.exitCode !== null || p.signalCode !== null) throw new Error(`sshd on ${address}:${port} exited at start:\n${safeRead(log)}`);
    const greeted = await new Promise<boolean>((resolve) => {
      const s = connect(port, address);
      s.once('data', (d) => {
        s.destroy();
        resolve(d.toString('latin1').startsWith('SSH-'));
      });
      s.once('error', () => resolve(false));
    });
    if (greeted) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`sshd on ${address}:${port} did not answer:\n${safeRead(log)}`);
}

function safeRead(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '(no log)';
  }
}

/** Two private servers, on 127.0.0.2 and 127.0.0.3, that accept these keys: the usual pair of "hosts". */
export function startHostPair(authorizedKeys: string[]): Promise<[PrivateSshd, PrivateSshd]> {
  return Promise.all([startSshd({ address: '127.0.0.2', authorizedKeys }), startSshd({ address: '127.0.0.3', authorizedKeys })]);
}

/**
 * One private server per name on 127.0.0.2, .3, …, each with its own $HOME (so each "host" has its own
 * ~/.shoal: uploads, jobs and logs stay apart). Remove the homes with `removeHomes` after the servers stop.
 */
export async function startHostsWithHomes(names: string[], authorizedKeys: string[]): Promise<{ servers: PrivateSshd[]; homes: string[] }> {
  const homes = names.map(hostHome);
  const servers = await Promise.all(homes.map((home, i) => startSshd({ address: `127.0.0.${i + 2}`, authorizedKeys, home })));
  return { servers, homes };
}

/**
 * A folder of stand-in programs for a simulated host's PATH (startSshd's `pathPrefix`): a GPU server's
 * `nvidia-smi`, `ldconfig` and `uname` (gpuStandIns.ts), and a `node` whose --version says
 * `nodeVersion` (anything else runs the real Node).
 */
export function standInBin(dir: string, options: { machine?: StandInMachine; nodeVersion?: string }): string {
  mkdirSync(dir, { recursive: true });
  if (options.machine) writeGpuStandIns(dir, options.machine);
  if (options.nodeVersion) {
    writeFileSync(join(dir, 'node'), `#!/bin/sh\nif [ "$1" = --version ]; then echo ${options.nodeVersion}; else exec ${process.execPath} "$@"; fi\n`, { mode: 0o755 });
  }
  return dir;
}

/** A cluster host for a test server, reached with the key at `keyPath` (not ssh-agent), through `jump` when given. */
export function hostFor(s: { address: string; port: number; user: string }, alias: string, keyPath: string, jump: SshHost['jump'] = []): SshHost {
  return { alias, address: s.address, port: s.port, user: s.user, identityFiles: [keyPath], useAgent: false, jump };
}

