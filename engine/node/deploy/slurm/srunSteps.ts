import { spawn } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ShellRunner } from '../jobOps.js';
import { slurmRun } from './slurmCli.js';

/** srun's arguments for one `sh -s` task on one node of the allocation, beside the job's other steps. */
const stepArgs = (allocation: string, node: string, name: string) => [
  `--jobid=${allocation}`,
  `--nodelist=${node}`,
  '--nodes=1',
  '--ntasks=1',
  '--overlap',
  '--unbuffered',
  `--job-name=${name}`,
  'sh',
  '-s',
];

/** Run a script on one node of the allocation and wait for it (status, stop, checks): stdin carries it. */
export function srunShell(allocation: string, node: string): ShellRunner {
  return (script) => slurmRun('srun', stepArgs(allocation, node, 'shoal-sh'), { stdin: script, timeoutMs: 120_000 });
}

/**
 * Start a long-lived step: `srun … sh -s` detached from this process (its own session, so the end of
 * the CLI or the studio does not end it), the script read from a mode-600 file in `dir` (it carries
 * the job secret), its output going to files there. The step lives as long as the script does, so the
 * processes it starts stay inside the allocation (proctrack sees them; scancel ends them). Resolves
 * with the step's output once `ready` accepts it; an exit before that is an error with srun's words.
 */
export async function startStep(
  allocation: string,
  node: string,
  name: string,
  script: string,
  dir: string,
  ready: (stdout: string) => boolean,
  timeoutMs = 120_000,
): Promise<string> {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const base = join(dir, `${node}-${name}`);
  writeFileSync(`${base}.sh`, script, { mode: 0o600 });
  const input = openSync(`${base}.sh`, 'r');
  const output = openSync(`${base}.out`, 'w', 0o600);
  const errors = openSync(`${base}.err`, 'w', 0o600);
  let exited: number | null | undefined;
  try {
    const child = spawn('srun', stepArgs(allocation, node, `shoal-${name}`), { detached: true, stdio: [input, output, errors] });
    child.once('error', () => (exited = -1));
    child.once('exit', (code) => (exited = code));
    child.unref();
  } finally {
    for (const fd of [input, output, errors]) closeSync(fd);
  }
  const read = (ext: string) => (existsSync(`${base}.${ext}`) ? readFileSync(`${base}.${ext}`, 'utf8') : '');
  try {
    for (const until = Date.now() + timeoutMs; ; ) {
      const out = read('out');
      if (ready(out)) return out;
      if (exited !== undefined) {
        const said = (read('err').trim() || out.trim() || 'no output').split('\n').slice(-8).join('\n');
        throw new Error(`srun on ${node} ended (exit ${exited}) before ${name} started: ${said}`);
      }
      if (Date.now() > until) throw new Error(`${name} did not start on ${node} within ${timeoutMs / 1000} s; srun said: ${read('err').trim() || 'nothing'}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  } finally {
    // The script holds the secret; srun has read it (the process's config is written on the node).
    rmSync(`${base}.sh`, { force: true });
  }
}
