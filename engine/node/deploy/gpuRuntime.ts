import type { Client } from 'ssh2';
import type { ProbeFacts } from './ssh/preflightProbe.js';
import { gpuReadiness } from './gpuReadiness.js';
import { runRemote } from './ssh/exec.js';
import { DEFAULT_REMOTE_DIR, remoteDirWord, remotePath } from './remotePaths.js';

/** The native GPU backend agents load when it is installed; the same version as the bundled tfjs-core. */
export const GPU_PACKAGE = '@tensorflow/tfjs-node-gpu';
export const TFJS_VERSION = '4.22.0';
/*
 * Shared by every agent build on the host: agents live in <remote dir>/agent/<hash>/, and Node's module
 * resolution walks up to <remote dir>/node_modules (~/.shoal/node_modules by default), so the package
 * is installed once, not per upload.
 */

export type GpuRuntimeDecision = { install: false; reason: string } | { install: true; gpus: string };

/**
 * Install the native GPU backend only where preflight found GPUs tfjs-node-gpu can use, and not when
 * told not to. A host whose GPUs it cannot use is refused with the reason, unless the user allows its
 * agents to train on the CPU (`allowCpuFallback`): never a silent fallback.
 */
export function decideGpuRuntime(facts: ProbeFacts, o: { noGpu: boolean; allowCpuFallback: boolean }): GpuRuntimeDecision {
  const gpu = gpuReadiness(facts);
  if (gpu.kind === 'no-gpu') return { install: false, reason: 'no GPU; agents use the CPU' };
  if (o.noGpu) return { install: false, reason: `${facts.gpus.length} GPU(s), but --no-gpu: agents use the CPU` };
  if (gpu.kind === 'unusable') {
    if (!o.allowCpuFallback) throw new Error(`${gpu.line} Or deploy with --allow-cpu-fallback to train on this host's CPU, or with --no-gpu.`);
    return { install: false, reason: `GPUs not usable, agents use the CPU (--allow-cpu-fallback): ${gpu.line}` };
  }
  return { install: true, gpus: facts.gpus.map((g) => `${g.index}: ${g.name}`).join(', ') };
}

const CHECK = (dir: string) => `P=${remoteDirWord(dir)}/node_modules/${GPU_PACKAGE}/package.json; [ -f "$P" ] && grep -q '"version": *"${TFJS_VERSION}"' "$P" && echo present\n`;

const INSTALL = (dir: string) => [
  'command -v npm >/dev/null 2>&1 || { echo "SHOAL_NO_NPM"; exit 41; }',
  `mkdir -p ${remoteDirWord(dir)} && cd ${remoteDirWord(dir)}`,
  `[ -f package.json ] || echo '{ "private": true, "description": "Shoal agents: native TensorFlow backends" }' > package.json`,
  `npm install --no-audit --no-fund --no-update-notifier ${GPU_PACKAGE}@${TFJS_VERSION} 2>&1`,
  '',
].join('\n');

/** Install the package into the host's shared cache unless it is there; npm's output becomes progress. */
export async function ensureGpuRuntime(client: Client, where: string, onProgress: (detail: string) => void, remoteDir: string = DEFAULT_REMOTE_DIR): Promise<'present' | 'installed'> {
  const check = await runRemote(client, 'sh -s', { stdin: CHECK(remoteDir), timeoutMs: 30_000 });
  if (/^present$/m.test(check.stdout)) return 'present';
  onProgress(`installing ${GPU_PACKAGE}@${TFJS_VERSION} into ${remotePath(remoteDir, 'node_modules')} (once per host or shared remote directory)`);
  const run = await runRemote(client, 'sh -s', { stdin: INSTALL(remoteDir), timeoutMs: 20 * 60_000, onLine: (line) => onProgress(`npm: ${line.slice(0, 200)}`) });
  if (run.code !== 0) throw new Error(explainInstallFailure(where, run.code, run.stdout + run.stderr, remoteDir));
  return 'installed';
}

/** What went wrong with `npm install` on the host, in words that say what to do. */
export function explainInstallFailure(where: string, code: number | null, output: string, remoteDir: string = DEFAULT_REMOTE_DIR): string {
  const manual = `install it by hand on that host (cd ${remotePath(remoteDir)} && npm install ${GPU_PACKAGE}@${TFJS_VERSION}), or deploy with --no-gpu to train on wasm there`;
  if (output.includes('SHOAL_NO_NPM')) return `${where} has GPUs but no npm on the PATH of SSH sessions, so ${GPU_PACKAGE} cannot be installed: install npm (it comes with Node), or ${manual}.`;
  const tail = output.trim().split('\n').slice(-6).join(' | ').slice(0, 600);
  if (/libtensorflow|storage\.googleapis\.com/i.test(output) && /ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ETIMEDOUT|ECONNRESET|ENETUNREACH|EHOSTUNREACH|403|404/.test(output))
    return `${where} installed ${GPU_PACKAGE} from the npm registry but could not download libtensorflow (storage.googleapis.com): allow that host HTTPS access to it, or ${manual}. npm said: ${tail}`;
  const network = /\b(ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ETIMEDOUT|ECONNRESET|ENETUNREACH|EHOSTUNREACH|ERR_SOCKET_TIMEOUT|CERT_\w+|SELF_SIGNED_CERT\w*)\b/.exec(output);
  if (network) {
    const registry = /(https?:\/\/[^\s/]+)/.exec(output)?.[1] ?? 'the npm registry';
    return `${where} cannot reach ${registry} (${network[1]}) to install ${GPU_PACKAGE}: give that host access to the registry (or set npm's registry/proxy for that user with npm config set registry|proxy|https-proxy), or ${manual}.`;
  }
  return `npm install ${GPU_PACKAGE}@${TFJS_VERSION} failed on ${where} (exit ${code}): ${tail}. Fix the cause, or ${manual}.`;
}
