import { parseArgs } from 'node:util';
import { zooEntries } from '../model/zoo.js';
import { fail, failUsage } from './commands/fail.js';
import { exitCodeFor, usageMessage } from './commands/usage.js';
import { joinNegativeValues } from './commands/optionValues.js';
import { RESIZE_USAGE, runResizeCommand } from './commands/resize.js';
import { RESUME_USAGE, runResume } from './commands/resume.js';
import { runClusterCommand } from './commands/cluster.js';
import { runSuggest } from './commands/suggest.js';
import { runAttachCommand } from './commands/attach.js';
import { DEPLOY_USAGE, runDeployCommand } from './commands/deploy.js';
import { EXPORT_USAGE, runExportCommand } from './commands/export.js';
import { h5Ready } from './keras/h5.js';
import { runJobsCommand } from './commands/jobs.js';
import { runStopCommand, STOP_USAGE } from './commands/stop.js';
import { PULL_USAGE, runPullCommand } from './commands/pull.js';
import { printPresetPlan, runTrain, TRAIN_OPTIONS, TRAIN_USAGE } from './commands/train.js';

const USAGE = `shoal — hybrid-parallel training with TensorFlow.js

Usage:
  ${TRAIN_USAGE.split('\n\n')[0]}
  shoal plan  --model <name|model.json> --cluster <cluster.json|local:N> [--top K] [--global-batch B]
              [--exhaustive] [--runnable] [--json]                  suggest plans, fastest first
                                   (--runnable, implied for local:N: only plans the agents can run today)
  shoal plan  --model <name> --plan pp2-dp2 [--cluster local:N]     print a preset plan as JSON and check it
  shoal models                                                      list the built-in models
  shoal cluster add|import|test|list …                              SSH clusters: hosts, host keys, preflight
  ${DEPLOY_USAGE}
  shoal jobs [--json]                                               deployed jobs and their state
  shoal attach <job> [--json] [--no-follow]                         a job's history, then live events
  ${STOP_USAGE}
  ${PULL_USAGE}
  ${RESUME_USAGE}
  ${EXPORT_USAGE}
  ${RESIZE_USAGE}

Defaults: --cluster local (one agent per core, at least 2), --plan pp1-dp1, --epochs 5.
Each run has a folder (job.json, checkpoints/step-N.ckpt): --out DIR chooses it (default under
~/.local/share/shoal/runs); --checkpoint-every N also saves every N steps; the last step is always saved.
With --json, train prints one JSON object per line and ends with {"final": true, "validationLoss": …, "validationAccuracy": …, "metrics": {…}, "confusion": {…}}.`;

/**
 * `shoal <command> --help`: the command's full usage for train, else its lines of the overview (a line
 * starting `shoal <command>` and the indented lines that continue it).
 */
function usageOf(command: string): string {
  if (command === 'train') return TRAIN_USAGE;
  const lines = USAGE.split('\n');
  const picked: string[] = [];
  lines.forEach((line, i) => {
    if (!line.trim().startsWith(`shoal ${command}`)) return;
    picked.push(line.trim());
    for (let j = i + 1; j < lines.length && /^\s{6,}\S/.test(lines[j]) && !lines[j].trim().startsWith('shoal '); j++) picked.push(lines[j]);
  });
  return picked.length ? `Usage:\n  ${picked.join('\n  ')}` : USAGE;
}

const COMMANDS = ['train', 'plan', 'models', 'cluster', 'deploy', 'jobs', 'attach', 'stop', 'pull', 'resume', 'export', 'resize'];

/** The `shoal` command line: each command lives in ./commands; this file only dispatches. */
async function main(): Promise<void> {
  const [command, ...given] = process.argv.slice(2);
  const rest = joinNegativeValues(given);
  // Keras files are read through h5wasm, whose module loads asynchronously: once, before any command.
  if (rest.some((a) => /\.(keras|h5|hdf5)$/i.test(a)) || command === 'export' || command === 'resume') await h5Ready();
  if (COMMANDS.includes(command) && command !== 'cluster' && rest.some((a) => a === '--help' || a === '-h')) {
    process.stdout.write(usageOf(command) + '\n');
    return;
  }
  if (command === 'resume') return runResume(rest);
  if (command === 'cluster') {
    process.exitCode = await runClusterCommand(rest);
    return;
  }
  const jobCommands: Record<string, (args: string[]) => Promise<number>> = { deploy: runDeployCommand, jobs: runJobsCommand, attach: runAttachCommand, stop: runStopCommand, pull: runPullCommand, resize: runResizeCommand, export: runExportCommand };
  if (command in jobCommands) {
    process.exitCode = await jobCommands[command](rest);
    return;
  }
  if (command === 'plan' && !rest.some((a) => /^--plan(-file)?(=|$)/.test(a))) return runSuggest(rest);
  if (command === 'train' || command === 'plan') {
    const { values } = parseArgs({ args: rest, options: TRAIN_OPTIONS, allowPositionals: false });
    return command === 'train' ? runTrain(values) : printPresetPlan(values);
  }
  if (command === 'models') {
    parseArgs({ args: rest, options: {}, allowPositionals: false });
    for (const m of zooEntries()) process.stdout.write(`${m.name.padEnd(14)} ${String(m.params).padStart(13)} params  ${m.description}\n`);
    return;
  }
  if (!command || command === 'help' || command === '--help' || command === '-h') {
    process.stdout.write(USAGE + '\n');
    return;
  }
  failUsage(`unknown command "${command}". The commands are ${COMMANDS.join(', ')}; \`shoal --help\` shows what each does.`);
}

main().catch((err: Error) => {
  const command = process.argv[2] ?? '';
  if (exitCodeFor(err) !== 2) fail(err.message);
  process.stderr.write(`shoal ${command}: ${(err as { code?: string }).code ? usageMessage(command, err) : err.message}\n`);
  process.exit(2);
});
