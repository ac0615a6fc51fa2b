import { runCoordinator } from './coordinator/coordinator.js';
import { runAgent } from './runtime/agentProcess.js';

/**
 * The single file uploaded to every host: `node shoal-agent.cjs agent` or `… coordinator`.
 * Configuration (and the job secret) arrive on standard input.
 */
const role = process.argv[2];
// A terminal's Ctrl-C reaches the whole process group, these supervised children of `shoal train`
// too: the job's owner answers it (a checkpoint, then a stop) and ends them itself, by SIGTERM.
if (process.env.SHOAL_SUPERVISED === '1') process.on('SIGINT', () => {});
// An attached job's output goes to pipes its owner reads. An owner killed unannounced leaves them broken
// (EPIPE), and the job must still stop cleanly with its checkpoint (coordinator/ownerWatch.ts): a
// failed write of a log line is not worth the process.
if (process.env.SHOAL_OWNER_PID) for (const stream of [process.stdout, process.stderr]) stream.on('error', () => {});
const main = role === 'agent' ? runAgent : role === 'coordinator' ? runCoordinator : null;
if (!main) {
  process.stderr.write(`usage: shoal-agent agent|coordinator   (configuration as one JSON line on stdin; started by Shoal)\n`);
  process.exit(2);
}
main().catch((err: Error) => {
  process.stderr.write(`[${role}] fatal: ${err.message}\n`);
  process.exit(1);
});
