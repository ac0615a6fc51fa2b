import type { CommandIo } from '../../engine/node/commands/commandIo.js';
import { listDeployRecords } from '../../engine/node/jobs/deployRecord.js';
import { launcherFor } from '../../engine/node/jobs/launcherFor.js';
import { removeHomes } from './homes.js';
import { stopAllSshd } from './sshd.js';

export interface CommandResult {
  code: number;
  out: string;
  err: string;
}

/** Run a CLI command function (`runDeployCommand`, `runClusterCommand`…) in-process, capturing what it prints; no terminal to ask. */
export async function runCommand(command: (args: string[], io: CommandIo) => Promise<number>, ...args: string[]): Promise<CommandResult> {
  let out = '';
  let err = '';
  const code = await command(args, { out: (t) => (out += t), err: (t) => (err += t), interactive: false });
  return { code, out, err };
}

/** The JSON objects among a command's output lines (progress lines are skipped). */
export const jsonLines = <T>(text: string): T[] =>
  text
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as T);

/** Stop whatever deployed jobs a test left running, through the same path users take (shoal stop). */
export async function stopDeployedJobs(): Promise<void> {
  for (const { record } of listDeployRecords()) {
    const launcher = launcherFor(record);
    await launcher.stop(record.jobId).catch(() => {});
    launcher.close();
  }
}

/**
 * The end of a test file that deploys to private sshd hosts: stop the jobs it left running, the sshd
 * servers and their homes, and give back the environment it set (SHOAL_DATA_DIR, the temporary home).
 */
export async function endDeployTests(homes: readonly string[] | undefined, env: { restore(): void } | undefined): Promise<void> {
  await stopDeployedJobs();
  await stopAllSshd();
  removeHomes(homes);
  delete process.env.SHOAL_DATA_DIR;
  env?.restore();
}
