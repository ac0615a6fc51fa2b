import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './sshd.js';

/**
 * A private, real Slurm on this machine: munged with a generated key on its own socket, slurmctld, and
 * two `slurmd -N node1|node2` that both run here (NodeAddr=127.0.0.1, ports of their own), all under one
 * temporary folder and one SLURM_CONF, so that two test runs never share a daemon or a port.
 * Starting it needs root (slurmd runs jobs as their users); `slurmAvailable` says why when it cannot.
 */
export interface PrivateSlurm {
  dir: string;
  /** The slurm.conf every command of this cluster must be given (SLURM_CONF). */
  conf: string;
  nodes: string[];
  partition: string;
  /** Run a Slurm client command against this cluster; returns stdout. */
  cmd(program: string, ...args: string[]): string;
  /** Cancel every job, stop the daemons and remove the folder; leaves no process behind. */
  stop(): Promise<void>;
}

const SBIN = ['/usr/sbin', '/usr/bin'];
const find = (program: string) => SBIN.map((d) => join(d, program)).find((p) => existsSync(p));

/** Why a real Slurm cannot start here (undefined: it can). */
export function slurmUnavailable(): string | undefined {
  if (process.getuid?.() !== 0) return 'the Slurm tests start slurmd, which needs root';
  for (const p of ['munged', 'mungekey', 'slurmctld', 'slurmd', 'srun']) {
    if (!find(p)) throw new Error(`${p} is missing: run scripts/setup-debian.sh (it installs slurm-wlm and munge).`);
  }
  return undefined;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function pidOf(file: string): number | undefined {
  if (!existsSync(file)) return undefined;
  const pid = Number(readFileSync(file, 'utf8').trim());
  return Number.isInteger(pid) && pid > 0 ? pid : undefined;
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

async function endProcess(pid: number | undefined): Promise<void> {
  if (pid === undefined || !alive(pid)) return;
  process.kill(pid, 'SIGTERM');
  for (let i = 0; i < 100 && alive(pid); i++) await sleep(50);
  if (alive(pid)) process.kill(pid, 'SIGKILL');
  for (let i = 0; i < 100 && alive(pid); i++) await sleep(50);
}

export async function startSlurm(options: { cpusPerNode?: number } = {}): Promise<PrivateSlurm> {
  // Short: munge's socket path must fit a sockaddr_un (108 bytes).
  const dir = mkdtempSync(join(tmpdir(), 'slurm-'));
  chmodSync(dir, 0o755);
  for (const d of ['state', 'spool', 'munge']) mkdirSync(join(dir, d));
  chmodSync(join(dir, 'munge'), 0o700);
  const key = join(dir, 'munge', 'munge.key');
  const socket = join(dir, 'munge', 'sock');
  execFileSync(find('mungekey')!, ['-c', '-k', key, '-b', '1024']);
  chmodSync(key, 0o600);
  const munge = join(dir, 'munge');
  execFileSync(find('munged')!, [`--key-file=${key}`, `--socket=${socket}`, `--pid-file=${munge}/pid`, `--log-file=${munge}/log`, `--seed-file=${munge}/seed`, '-f']);
  const [ctld, n1, n2] = [await freePort('127.0.0.1'), await freePort('127.0.0.1'), await freePort('127.0.0.1')];
  const name = `shoal${process.pid}`;
  const cpus = options.cpusPerNode ?? 4;
  const conf = join(dir, 'slurm.conf');
  const host = hostname();
  writeFileSync(
    conf,
    [
      `ClusterName=${name}`,
      `SlurmctldHost=${host}(127.0.0.1)`,
      `SlurmctldPort=${ctld}`,
      'AuthType=auth/munge',
      `AuthInfo=socket=${socket}`,
      'CredType=cred/munge',
      'SlurmUser=root',
      'SlurmdUser=root',
      `StateSaveLocation=${dir}/state`,
      `SlurmdSpoolDir=${dir}/spool/%n`,
      `SlurmctldPidFile=${dir}/slurmctld.pid`,
      `SlurmdPidFile=${dir}/slurmd-%n.pid`,
      `SlurmctldLogFile=${dir}/slurmctld.log`,
      `SlurmdLogFile=${dir}/slurmd-%n.log`,
      'ProctrackType=proctrack/linuxproc',
      'TaskPlugin=task/none',
      'SelectType=select/cons_tres',
      'SelectTypeParameters=CR_CPU',
      'MpiDefault=none',
      'ReturnToService=2',
      'JobCompType=jobcomp/none',
      'AccountingStorageType=accounting_storage/none',
      // The two nodes claim what the test needs, not what this machine has.
      'SlurmdParameters=config_overrides',
      'SlurmdTimeout=30',
      'InactiveLimit=0',
      'KillWait=5',
      `NodeName=node1 NodeHostname=${host} NodeAddr=127.0.0.1 Port=${n1} CPUs=${cpus} RealMemory=4000 State=UNKNOWN`,
      `NodeName=node2 NodeHostname=${host} NodeAddr=127.0.0.1 Port=${n2} CPUs=${cpus} RealMemory=4000 State=UNKNOWN`,
      'PartitionName=debug Nodes=node1,node2 Default=YES MaxTime=INFINITE State=UP',
      '',
    ].join('\n'),
  );
  const env = { ...process.env, SLURM_CONF: conf };
  const daemon = (program: string, ...args: string[]) => {
    const r = spawnSync(find(program)!, args, { env, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`${program} ${args.join(' ')} failed (exit ${r.status}): ${r.stderr}`);
  };
  const cmd = (program: string, ...args: string[]) => execFileSync(find(program)!, args, { env, encoding: 'utf8', timeout: 30_000 });
  const nodes = ['node1', 'node2'];
  const slurm: PrivateSlurm = {
    dir,
    conf,
    nodes,
    partition: 'debug',
    cmd,
    stop: async () => {
      try {
        spawnSync(find('scancel')!, ['--full', '--quiet', '-u', 'root'], { env, timeout: 30_000 });
        for (let i = 0; i < 200; i++) {
          const r = spawnSync(find('squeue')!, ['-h', '-o', '%i'], { env, encoding: 'utf8', timeout: 30_000 });
          if (r.status !== 0 || r.stdout.trim() === '') break;
          await sleep(100);
        }
      } finally {
        for (const n of nodes) await endProcess(pidOf(join(dir, `slurmd-${n}.pid`)));
        await endProcess(pidOf(join(dir, 'slurmctld.pid')));
        await endProcess(pidOf(join(munge, 'pid')));
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
  try {
    daemon('slurmctld');
    for (const n of nodes) daemon('slurmd', '-N', n);
    for (let i = 0; ; i++) {
      const states = spawnSync(find('sinfo')!, ['-h', '-N', '-o', '%N %t'], { env, encoding: 'utf8' }).stdout ?? '';
      if (nodes.every((n) => new RegExp(`^${n} idle`, 'm').test(states))) break;
      if (i > 300) throw new Error(`The private Slurm's nodes did not come up within 30 s:\n${states}\n${readFileSync(join(dir, 'slurmctld.log'), 'utf8').slice(-2000)}`);
      await sleep(100);
    }
  } catch (err) {
    await slurm.stop();
    throw err;
  }
  return slurm;
}
