import type { ClockSkew } from './clockSkew.js';
import { gpuReadiness } from '../gpuReadiness.js';
import type { ProbeFacts } from './preflightProbe.js';

export type PreflightStep = 'reachable' | 'hostKey' | 'authenticated' | 'os' | 'cpu' | 'memory' | 'disk' | 'node' | 'gpu' | 'ports' | 'clock';
export type StepStatus = 'running' | 'ok' | 'warn' | 'fail' | 'skipped';

export interface StepVerdict {
  step: PreflightStep;
  status: Exclude<StepStatus, 'running'>;
  detail: string;
}

/** Agents are bundled for Node 20 (fetch, structuredClone, stable test runner APIs). */
export const MIN_NODE_MAJOR = 20;
/** Room for the agent bundle, a tfjs-node-gpu install and checkpoints. */
const MIN_FREE_DISK = 2 * 1024 ** 3;
/** Beyond this the merged timelines of two hosts visibly disagree; NTP keeps clocks far closer. */
const MAX_CLOCK_SKEW_MS = 1000;

const gib = (bytes: number) => `${(bytes / 1024 ** 3).toFixed(1)} GiB`;

const NODE_FIX =
  `Install Node ${MIN_NODE_MAJOR} LTS or newer for this user (e.g. nvm install ${MIN_NODE_MAJOR}, the NodeSource packages, or a tarball from nodejs.org) ` +
  `and make sure non-interactive SSH sessions find it: ssh <host> node --version must print v${MIN_NODE_MAJOR} or later.`;

/** Judge the probed facts, one verdict per step, each with a detail the user can act on. */
export function judgeFacts(f: ProbeFacts, user: string): StepVerdict[] {
  const v: StepVerdict[] = [];
  if (!f.os) v.push({ step: 'os', status: 'fail', detail: `uname printed nothing: the login shell of ${user} may not be a POSIX shell.` });
  else v.push({ step: 'os', status: /^(Linux|Darwin)$/.test(f.os) ? 'ok' : 'warn', detail: `${f.os} ${f.arch ?? '?'}${/^(Linux|Darwin)$/.test(f.os) ? '' : ' (untested: Shoal runs agents on Linux and macOS)'}` });
  v.push(f.cpus ? { step: 'cpu', status: 'ok', detail: `${f.cpus} × ${f.cpuModel ?? 'unknown model'}` } : { step: 'cpu', status: 'warn', detail: 'could not count CPUs' });
  v.push(
    f.memoryBytes
      ? { step: 'memory', status: 'ok', detail: `${gib(f.memoryBytes)}${f.memoryAvailableBytes ? ` (${gib(f.memoryAvailableBytes)} available)` : ''}` }
      : { step: 'memory', status: 'warn', detail: 'could not read the memory size' },
  );
  if (f.diskFreeBytes === undefined) v.push({ step: 'disk', status: 'warn', detail: `could not read free space in ${f.home ?? 'the home directory'}` });
  else
    v.push({
      step: 'disk',
      status: f.diskFreeBytes < MIN_FREE_DISK ? 'warn' : 'ok',
      detail: `${gib(f.diskFreeBytes)} free in ${f.home ?? '~'}${f.diskFreeBytes < MIN_FREE_DISK ? `: less than ${gib(MIN_FREE_DISK)}, the agent, packages and checkpoints may not fit` : ''}`,
    });
  v.push(judgeNode(f));
  v.push(judgeGpus(f));
  if (!f.port) v.push({ step: 'ports', status: 'skipped', detail: 'needs Node on the host' });
  else if (f.port.ok) v.push({ step: 'ports', status: 'ok', detail: `can listen on TCP (bound port ${f.port.port}${f.portRange ? `; ephemeral range ${f.portRange[0]}–${f.portRange[1]}` : ''})` });
  else v.push({ step: 'ports', status: 'fail', detail: `cannot listen on a TCP port (${f.port.error}): agents must accept connections from their peers.` });
  return v;
}

/** Each GPU (index, name, memory, uuid), and whether tfjs-node-gpu can use them (gpuReadiness.ts). */
function judgeGpus(f: ProbeFacts): StepVerdict {
  const gpu = gpuReadiness(f);
  const list = f.gpus.map((g) => `${g.index}: ${g.name} (${gib(g.memoryBytes)}, ${g.uuid})`).join(', ');
  if (gpu.kind === 'no-gpu') return { step: 'gpu', status: 'ok', detail: 'none (no nvidia-smi): agents run on the CPU' };
  if (gpu.kind === 'ready') return { step: 'gpu', status: 'ok', detail: `${list}; ${gpu.summary}` };
  return { step: 'gpu', status: 'warn', detail: `${gpu.line}${list ? ` GPUs: ${list}.` : ''} Until then a job runs on this host's CPU only with --allow-cpu-fallback.` };
}

function judgeNode(f: ProbeFacts): StepVerdict {
  if (!f.node) return { step: 'node', status: 'fail', detail: `no node on the PATH of SSH sessions. ${NODE_FIX}` };
  const major = Number(/^v(\d+)\./.exec(f.node.version)?.[1]);
  if (!(major >= MIN_NODE_MAJOR)) return { step: 'node', status: 'fail', detail: `Node ${f.node.version} at ${f.node.path} is too old (need ≥ ${MIN_NODE_MAJOR}). ${NODE_FIX}` };
  return { step: 'node', status: 'ok', detail: `${f.node.version} (${f.node.path})` };
}

export function judgeClock(c: ClockSkew): StepVerdict {
  const text = `${c.skewMs >= 0 ? '+' : '−'}${Math.abs(Math.round(c.skewMs))} ms ± ${Math.ceil(c.uncertaintyMs)} ms`;
  if (Math.abs(c.skewMs) - c.uncertaintyMs > MAX_CLOCK_SKEW_MS)
    return { step: 'clock', status: 'warn', detail: `${text} off this machine: enable NTP on the host (e.g. timedatectl set-ntp true) so timelines line up.` };
  return { step: 'clock', status: 'ok', detail: text };
}
