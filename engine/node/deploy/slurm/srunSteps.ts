import { randomBytes } from 'node:crypto';
import type { ShellRunner } from '../jobOps.js';
import { shQuote } from '../shellQuote.js';
import type { SlurmControl } from './slurmControl.js';

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
export function srunShell(control: SlurmControl, allocation: string, node: string): ShellRunner {
  return (script) => control.run('srun', stepArgs(allocation, node, 'shoal-sh'), { stdin: script, timeoutMs: 120_000 });
}

const SEPARATOR = '--- shoal step ---';

/**
 * The login-node script that starts a step detached (`setsid`: its own session, so neither the end of
 * the CLI, the studio nor an SSH session ends it): the node's script goes to a mode-600 file (it
 * carries the job secret) that srun reads as its stdin, srun's output and exit status to files beside it.
 */
function detachScript(control: SlurmControl, args: readonly string[], base: string, script: string): string {
  let delimiter = `SHOAL_${randomBytes(6).toString('hex')}`;
  while (script.includes(delimiter)) delimiter = `SHOAL_${randomBytes(6).toString('hex')}`;
  const exports = Object.entries(control.env).map(([k, v]) => `export ${k}=${shQuote(v)}\n`);
  const srun = ['srun', ...args].map(shQuote).join(' ');
  return [
    'umask 077',
    `B=${base}`,
    'mkdir -p "$(dirname "$B")" || exit 1',
    'rm -f "$B.out" "$B.err" "$B.exit"',
    `cat > "$B.sh" <<'${delimiter}'\n${script}${script.endsWith('\n') ? '' : '\n'}${delimiter}`,
    `${exports.join('')}command -v srun >/dev/null 2>&1 || { echo "srun is not on the PATH of ${control.where}" >&2; exit 127; }`,
    `setsid sh -c ${shQuote(`${srun} < "$1.sh" > "$1.out" 2> "$1.err"; echo $? > "$1.exit"`)} shoal-step "$B" </dev/null >/dev/null 2>&1 &`,
    'echo started',
    '',
  ].join('\n');
}

/** What the step has said so far: its output, its exit status once it ended, the end of its errors. */
const pollScript = (base: string) => `B=${base}\ncat "$B.out" 2>/dev/null\necho '${SEPARATOR}'\ncat "$B.exit" 2>/dev/null\necho '${SEPARATOR}'\ntail -c 4000 "$B.err" 2>/dev/null\n`;

/**
 * Start a long-lived step on `node` from the login node. The step lives as long as the script does, so
 * the processes it starts stay inside the allocation (proctrack sees them; scancel ends them).
 * `dirWord` is the folder for its files as one shell word on the login node. Resolves with the step's
 * output once `ready` accepts it; an exit before that is an error with srun's words.
 */
export async function startStep(
  control: SlurmControl,
  allocation: string,
  node: string,
  name: string,
  script: string,
  dirWord: string,
  ready: (stdout: string) => boolean,
  timeoutMs = 120_000,
): Promise<string> {
  const base = `${dirWord}/${shQuote(`${node}-${name}`)}`;
  const started = await control.shell(detachScript(control, stepArgs(allocation, node, `shoal-${name}`), base, script));
  if (started.code !== 0 || !/^started$/m.test(started.stdout)) {
    throw new Error(`could not start srun on ${node} from ${control.where} (exit ${started.code}): ${(started.stderr.trim() || started.stdout.trim() || 'no output').split('\n').slice(-6).join('\n')}`);
  }
  try {
    for (const until = Date.now() + timeoutMs; ; ) {
      const [out = '', exit = '', errors = ''] = (await control.shell(pollScript(base))).stdout.split(`${SEPARATOR}\n`);
      if (ready(out)) return out;
      if (exit.trim() !== '') {
        const said = (errors.trim() || out.trim() || 'no output').split('\n').slice(-8).join('\n');
        throw new Error(`srun on ${node} ended (exit ${exit.trim()}) before ${name} started: ${said}`);
      }
      if (Date.now() > until) throw new Error(`${name} did not start on ${node} within ${timeoutMs / 1000} s; srun said: ${errors.trim() || 'nothing'}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  } finally {
    // The script holds the secret; srun has read it (the process's config is written on the node).
    await control.shell(`rm -f ${base}.sh\n`).catch(() => {});
  }
}
