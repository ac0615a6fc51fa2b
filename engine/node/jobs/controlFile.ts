import { closeSync, existsSync, openSync, readFileSync, renameSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import type { JobEvent } from '../../protocol/events.js';
import { processAlive } from './processAlive.js';

/**
 * How another process reaches a running local job: `control.json` in its run folder holds the
 * coordinator's address and the job secret. It is written mode 600 (a temporary file created with that
 * mode, then renamed, so no one ever reads it half-written or with looser permissions) and removed
 * when the job ends. Its absence means the job is not running.
 */
export const CONTROL_FILE = 'control.json';

export interface ControlInfo {
  jobId: string;
  host: string;
  port: number;
  /** Carries the job secret: never print it, log it or put it on a command line. */
  secret: string;
  /** The process that owns the job (`shoal train`, the studio): a dead owner means a stale file. */
  ownerPid: number;
}

export function writeControlFile(runDir: string, info: ControlInfo): void {
  const tmp = join(runDir, `.${CONTROL_FILE}.${process.pid}.tmp`);
  const fd = openSync(tmp, 'wx', 0o600);
  try {
    writeSync(fd, JSON.stringify(info) + '\n');
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, join(runDir, CONTROL_FILE));
  // However this process ends (an uncaught error, process.exit), the secret does not stay on disk.
  written.add(runDir);
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.on('exit', () => {
      for (const dir of written) rmSync(join(dir, CONTROL_FILE), { force: true });
    });
  }
}

/** Run folders whose control file this process wrote and has not removed yet. */
const written = new Set<string>();
let exitHookInstalled = false;

/**
 * The control information of a run folder, or undefined when the job is not running there. A file
 * whose owner process is gone (killed without cleaning up) is stale: it is removed here, so its
 * secret does not outlive the job.
 */
export function readControlFile(runDir: string): ControlInfo | undefined {
  const file = join(runDir, CONTROL_FILE);
  if (!existsSync(file)) return undefined;
  let parsed: Partial<ControlInfo>;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8')) as Partial<ControlInfo>;
  } catch (err) {
    throw new Error(`The control file ${file} cannot be read: ${(err as Error).message}.`);
  }
  if (typeof parsed.port !== 'number' || typeof parsed.secret !== 'string' || typeof parsed.jobId !== 'string') {
    throw new Error(`The control file ${file} is not one Shoal wrote (no port, secret or job id).`);
  }
  const info = { jobId: parsed.jobId, host: parsed.host ?? '127.0.0.1', port: parsed.port, secret: parsed.secret, ownerPid: Number(parsed.ownerPid ?? 0) };
  if (!ownerAlive(info)) {
    rmSync(file, { force: true });
    return undefined;
  }
  return info;
}

export function removeControlFile(runDir: string): void {
  written.delete(runDir);
  if (runDir) rmSync(join(runDir, CONTROL_FILE), { force: true });
}

/** Whether the process that wrote a control file is still alive (signal 0 probes without signalling). */
export function ownerAlive(info: ControlInfo): boolean {
  return !info.ownerPid || processAlive(info.ownerPid);
}

export type MembershipEvent = Extract<JobEvent, { type: 'membership' }>;
export const MEMBERSHIP_FILE = 'membership.json';

/** The newest generation of a running job (ranks, hosts, pids, virtual nodes), replaced atomically. */
export function writeMembershipFile(runDir: string, event: MembershipEvent): void {
  const tmp = join(runDir, `.${MEMBERSHIP_FILE}.${process.pid}.tmp`);
  try {
    writeFileSync(tmp, JSON.stringify(event) + '\n');
    renameSync(tmp, join(runDir, MEMBERSHIP_FILE));
  } catch {
    // Informational only: a full disk must not end the training.
  }
}

export function readMembershipFile(runDir: string): MembershipEvent | undefined {
  try {
    return JSON.parse(readFileSync(join(runDir, MEMBERSHIP_FILE), 'utf8')) as MembershipEvent;
  } catch {
    return undefined;
  }
}
