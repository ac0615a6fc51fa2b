import { existsSync, readdirSync, statSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { agentBundlePath } from '../deploy/agentBundle.js';
import { startDetachedAgent, type DetachedAgent } from '../deploy/detachedAgent.js';
import { ownerAlive, readControlFile, readMembershipFile, type ControlInfo, type MembershipEvent } from './controlFile.js';
import { followEvents } from './jobControl.js';
import { checkResizable, resizeJob } from './resizeJob.js';
import { agentConfig } from './jobConfigs.js';
import { latestCheckpoint, runsRoot } from './runStore.js';
import { readRunRecord, type RunRecord } from './runRecord.js';

/** How long an added agent's exit waits before it is the resize's answer (see startAgents). */
const EXIT_REPORT_DELAY_MS = 2_000;

export interface RunningJob {
  runDir: string;
  record: RunRecord;
  control: ControlInfo;
}

/**
 * A running local job (`shoal train`, the studio) by id or run folder, with what it takes to reach
 * its coordinator. Errors say what was looked for and what to do.
 */
export function findRunningJob(target: string): RunningJob {
  const candidates = [resolve(target), join(runsRoot(), target)];
  const runDir = candidates.find((p) => existsSync(join(p, 'job.json')) && statSync(p).isDirectory());
  if (!runDir) throw new Error(`No job "${target}": no run folder with a job.json at ${candidates.join(' or ')}. Give the job id that \`shoal train\` printed or its run folder (--out).`);
  const record = readRunRecord(runDir);
  const id = record.jobId;
  const control = readControlFile(runDir);
  if (!control) {
    if (existsSync(join(runDir, 'deploy.json'))) throw new Error(`Job ${id} was started with \`shoal deploy\`: resize it by its id (shoal resize ${id} --add <host>[:N]).`);
    throw new Error(`Job ${id} is not running: its run folder ${runDir} has no control.json (the job finished, failed or was stopped).${resumeAdvice(runDir)}`);
  }
  if (!ownerAlive(control)) {
    throw new Error(`Job ${id} is not running: the process that ran it (pid ${control.ownerPid}) has exited and left a stale control.json in ${runDir}.${resumeAdvice(runDir)}`);
  }
  checkResizable(id, record.plan.schedule);
  return { runDir, record, control };
}

export interface ResizeOutcome {
  membership: MembershipEvent;
  started: Array<{ pid: number; host: string; logFile: string }>;
}

/**
 * Resize a running local job from another process: its coordinator is reached through control.json,
 * and the `add` agents start on this machine detached from us (they join on their own and live as
 * long as the job).
 */
export async function resizeRunningJob(job: RunningJob, add: number, remove: number[], onProgress: (line: string) => void = () => {}): Promise<ResizeOutcome> {
  const { control, runDir } = job;
  const at = { host: control.host, port: control.port, secret: control.secret };
  const agents: DetachedAgent[] = [];
  try {
    const membership = await resizeJob(
      {
        jobId: job.record.jobId,
        at,
        current: () => readMembershipFile(runDir),
        events: (onEvent, onEnd) =>
          followEvents(at, onEvent, onEnd).catch((err: Error) => {
            throw new Error(`Job ${job.record.jobId} is not running: its coordinator does not answer at ${control.host}:${control.port} (${err.message}).${resumeAdvice(runDir)}`);
          }),
        onProgress,
        startAgents: async (n, failed) => {
          const bundle = agentBundlePath();
          const first = readdirSync(runDir).filter((f) => /^agent-local-a\d+\.log$/.test(f)).length;
          for (let i = 0; i < n; i++) {
            const host = `local-a${first + i}`;
            const agent = startDetachedAgent(bundle, agentConfig(control.secret, control, '127.0.0.1', host), join(runDir, `agent-${host}.log`));
            agents.push(agent);
            onProgress(`started agent ${host} (pid ${agent.child.pid}), its output in ${agent.logFile}`);
            // An agent the coordinator fenced out (it could not set up) exits at once; the coordinator's
            // refusal, which says why, is on its way: give it a moment to be the answer.
            agent.exited.then(({ code, signal }) => setTimeout(() => failed(new Error(`Agent ${host} (pid ${agent.child.pid}) ${signal ? `was killed by ${signal}` : `exited with code ${code}`} before the resize was applied; see ${agent.logFile}.`)), EXIT_REPORT_DELAY_MS).unref());
          }
        },
      },
      { add, remove },
    );
    return { membership, started: agents.map((a) => ({ pid: a.child.pid ?? 0, host: agentHost(a), logFile: a.logFile })) };
  } finally {
    for (const a of agents) a.release();
  }
}

const agentHost = (a: DetachedAgent) => a.logFile.replace(/^.*agent-(.+)\.log$/, '$1');

/** `shoal resume` is advised only for a run that has a checkpoint to continue from. */
function resumeAdvice(runDir: string): string {
  const newest = latestCheckpoint(join(runDir, 'checkpoints'));
  return newest ? ` \`shoal resume ${runDir}\` continues it from ${basename(newest)}.` : ' It left no checkpoint to resume from.';
}
