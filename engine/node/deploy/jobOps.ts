import type { ProcessSpec, StartedProcess, TargetJobState, TargetOutcome } from './launcher.js';
import { parseStartOutput, parseStatusOutput, readScript, startScript, statusScript, stopScript } from './jobScripts.js';
import type { RemoteResult } from './ssh/exec.js';

/**
 * The job operations every launcher shares, over whatever runs a script on a target (`sh -s` here,
 * over SSH, through srun): a launcher only supplies `ShellRunner`s.
 */
export type ShellRunner = (script: string) => Promise<RemoteResult>;

const said = (r: RemoteResult) => (r.stderr.trim() || r.stdout.trim() || 'no output').split('\n').slice(-8).join('\n');

export async function startWith(run: ShellRunner, target: string, spec: ProcessSpec, bundle: string, env: Record<string, string>): Promise<StartedProcess> {
  const r = await run(startScript(spec, bundle, env));
  const { pid, port } = parseStartOutput(r.stdout);
  if (r.code !== 0 || pid === undefined || (spec.role === 'coordinator' && port === undefined))
    throw new Error(`Starting the ${spec.role} ${spec.name} on ${target} failed (exit ${r.code}): ${said(r)}`);
  return { target, name: spec.name, role: spec.role, pid, ...(port === undefined ? {} : { port }) };
}

export async function readWith(run: ShellRunner, target: string, jobId: string, where: 'run' | 'temp', file: string): Promise<string | undefined> {
  const r = await run(readScript(jobId, where, file));
  if (r.code === 44) return undefined;
  if (r.code !== 0) throw new Error(`Reading ${file} of job ${jobId} on ${target} failed (exit ${r.code}): ${said(r)}`);
  return r.stdout;
}

export async function statusWith(run: ShellRunner, target: string, jobId: string): Promise<TargetJobState> {
  const r = await run(statusScript(jobId));
  if (r.code !== 0) return { target, ok: false, present: false, processes: [], error: `Checking job ${jobId} on ${target} failed (exit ${r.code}): ${said(r)}` };
  return { target, ok: true, ...parseStatusOutput(r.stdout) };
}

export async function stopWith(run: ShellRunner, target: string, jobId: string, isHead: boolean): Promise<TargetOutcome> {
  const r = await run(stopScript(jobId, isHead));
  if (r.code !== 0 || !/^(stopped (yes|no)|absent)$/m.test(r.stdout)) return { target, ok: false, error: `Stopping job ${jobId} on ${target} failed (exit ${r.code}): ${said(r)}` };
  return { target, ok: true };
}
