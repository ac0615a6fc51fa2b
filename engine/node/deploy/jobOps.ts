import type { ProcessSpec, StartedProcess, TargetJobState, TargetOutcome } from './launcher.js';
import { parseStartOutput, parseStatusOutput, readScript, startScript, statusScript, stopScript, type JobPlace, type StartOptions } from './jobScripts.js';
import type { RemoteResult } from './ssh/exec.js';

/**
 * The job operations every launcher shares, over whatever runs a script on a target (`sh -s` here,
 * over SSH, through srun): a launcher only supplies `ShellRunner`s. `place` names the host's own job
 * folder and the cluster's remote directory (remotePaths.ts); the target is the host unless given.
 */
export type ShellRunner = (script: string) => Promise<RemoteResult>;

const said = (r: RemoteResult) => (r.stderr.trim() || r.stdout.trim() || 'no output').split('\n').slice(-8).join('\n');

export async function startWith(run: ShellRunner, target: string, spec: ProcessSpec, options: Omit<StartOptions, 'host'> & { host?: string }): Promise<StartedProcess> {
  const r = await run(startScript(spec, { host: target, ...options }));
  const { pid, port } = parseStartOutput(r.stdout);
  if (r.code !== 0 || pid === undefined || (spec.role === 'coordinator' && port === undefined))
    throw new Error(`Starting the ${spec.role} ${spec.name} on ${target} failed (exit ${r.code}): ${said(r)}`);
  return { target, name: spec.name, role: spec.role, pid, ...(port === undefined ? {} : { port }) };
}

export async function readWith(run: ShellRunner, target: string, jobId: string, where: 'run' | 'temp', file: string, place: Partial<JobPlace> = {}): Promise<string | undefined> {
  const r = await run(readScript(jobId, { host: target, ...place }, where, file));
  if (r.code === 44) return undefined;
  if (r.code !== 0) throw new Error(`Reading ${file} of job ${jobId} on ${target} failed (exit ${r.code}): ${said(r)}`);
  return r.stdout;
}

export async function statusWith(run: ShellRunner, target: string, jobId: string, place: Partial<JobPlace> = {}): Promise<TargetJobState> {
  const r = await run(statusScript(jobId, { host: target, ...place }));
  if (r.code !== 0) return { target, ok: false, present: false, processes: [], error: `Checking job ${jobId} on ${target} failed (exit ${r.code}): ${said(r)}` };
  return { target, ok: true, ...parseStatusOutput(r.stdout) };
}

export async function stopWith(run: ShellRunner, target: string, jobId: string, isHead: boolean, place: Partial<JobPlace> = {}): Promise<TargetOutcome> {
  const r = await run(stopScript(jobId, { host: target, ...place }, isHead));
  if (r.code !== 0 || !/^(stopped (yes|no)|absent)$/m.test(r.stdout)) return { target, ok: false, error: `Stopping job ${jobId} on ${target} failed (exit ${r.code}): ${said(r)}` };
  return { target, ok: true };
}
