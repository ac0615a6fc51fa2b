import { randomBytes } from 'node:crypto';
import type { ClusterLinkProfile } from '../../cluster/linkProfile.js';
import { zooModel } from '../../model/zoo.js';
import type { PrepareEvent } from '../deploy/launcher.js';
import { remoteRunDir } from '../deploy/remotePaths.js';
import { SshLauncher, type SshLauncherOptions } from '../deploy/sshLauncher.js';
import { mapBounded } from '../deploy/ssh/mapBounded.js';
import type { SshHost } from './host.js';
import { agentConfig } from '../jobs/jobConfigs.js';

/** One step of the survey, for progress lines: per host (`prepare`, `agent`) or for the whole survey (host `links`). */
export interface SurveyEvent {
  host: string;
  step: 'survey' | 'prepare' | 'agent' | 'connect' | 'probe';
  status: 'running' | 'ok' | 'fail' | 'progress' | 'skipped';
  detail: string;
}

export interface SurveyOptions extends SshLauncherOptions {
  onProgress?: (e: SurveyEvent) => void;
  /** How often the coordinator's progress is read on the head host (default 500 ms). */
  pollMs?: number;
}

/** Lines the survey coordinator prints (agents/coordinator/linkSurvey.ts). */
type SurveyLine =
  | { survey: 'joined'; host: string; joined: number; agents: number }
  | { survey: 'linking' }
  | { survey: 'probing' }
  | { survey: 'done'; hosts: string[]; links: ClusterLinkProfile['links']; probe: NonNullable<ClusterLinkProfile['probe']> }
  | { survey: 'failed'; message: string };

/** The survey's own name for what goes wrong where: the message names the host and what to do. */
export class SurveyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SurveyError';
  }
}

const PREPARE_STATUS: Record<PrepareEvent['status'], SurveyEvent['status']> = { running: 'running', ok: 'ok', skipped: 'skipped', fail: 'fail', progress: 'progress' };

/**
 * Measure latency and bandwidth between every pair of `hosts` with real agents: the deploy machinery
 * prepares each host (the same agent upload, skipped when the build is there), a survey-mode
 * coordinator starts on the first host and one agent on each, detached as a job's would be; the agents
 * link up as one data-parallel group and run the job's link probe; the coordinator prints the pairs
 * and exits. Its progress is read from its output on the head host. Whatever happens, the survey's
 * processes are stopped and its temporary files removed; its logs stay in ~/.shoal/runs/<survey id>/ (under the cluster's remote directory).
 * Hosts that cannot be prepared are left out (named in `leftOut`); fewer than two left is an error.
 */
export async function surveyLinks(cluster: string, hosts: SshHost[], leftOut: ClusterLinkProfile['leftOut'], options: SurveyOptions = {}): Promise<ClusterLinkProfile> {
  const emit = options.onProgress ?? (() => {});
  const launcher = new SshLauncher(hosts, options);
  const jobId = `survey-${new Date().toISOString().replace(/[-:T]/g, '').slice(0, 14)}-${randomBytes(3).toString('hex')}`;
  let started = false;
  try {
    const skipped = leftOut.length ? `; left out: ${leftOut.map((l) => `${l.host} (${l.reason.split(':')[0]})`).join(', ')}` : '';
    emit({ host: 'links', step: 'survey', status: 'running', detail: `measuring the links between ${hosts.map((h) => h.alias).join(', ')} with agents${skipped}` });
    const prepared = await launcher.prepare((e) => emit({ host: e.target, step: 'prepare', status: PREPARE_STATUS[e.status], detail: `${e.step}: ${e.detail}` }));
    const left = [...leftOut];
    for (const p of prepared.filter((x) => !x.ok)) left.push({ host: p.target, reason: `agent upload failed: ${p.error}` });
    const ready = launcher.targets.filter((t) => prepared.some((p) => p.ok && p.target === t.alias));
    if (ready.length < 2) throw new SurveyError(`Only ${ready.length} host(s) could be prepared, and a link survey needs two. ${left.map((l) => `${l.host}: ${l.reason}`).join('; ')}`);

    const head = ready[0];
    const secret = randomBytes(32).toString('hex');
    emit({ host: head.alias, step: 'agent', status: 'running', detail: 'starting the survey coordinator' });
    started = true;
    const coordinator = await launcher.start(head.alias, {
      jobId,
      role: 'coordinator',
      name: 'coordinator',
      config: { mode: 'survey', secret, jobId, agents: ready.length, model: zooModel('mlp'), listenHost: head.peerAddress, roundTimeoutSec: 120, resultPath: 'survey.json' },
    });
    await mapBounded(ready, 8, async (t, i) => {
      await launcher.start(t.alias, { jobId, role: 'agent', name: `agent-${i}`, config: agentConfig(secret, { host: head.peerAddress, port: coordinator.port! }, t.peerAddress, t.alias) });
      emit({ host: t.alias, step: 'agent', status: 'running', detail: 'agent started, joining' });
    });

    const result = await follow(launcher, head.alias, jobId, options.pollMs ?? 500, emit);
    // Ranks follow the order agents joined; the profile lists hosts in the cluster's order, head first.
    const order = ready.map((t) => t.alias).filter((a) => result.hosts.includes(a));
    const profile: ClusterLinkProfile = { version: 1, cluster, measuredAt: new Date().toISOString(), hosts: order, links: result.links, leftOut: left, probe: result.probe };
    emit({ host: 'links', step: 'probe', status: 'ok', detail: `${result.links.length} pair(s) of ${result.hosts.length} hosts measured` });
    emit({ host: 'links', step: 'survey', status: 'ok', detail: `measured between ${order.join(', ')}` });
    return profile;
  } catch (err) {
    emit({ host: 'links', step: 'survey', status: 'fail', detail: (err as Error).message });
    throw err;
  } finally {
    if (started) await launcher.stop(jobId).catch(() => []);
    launcher.close();
  }
}

/** Read the coordinator's progress lines until its result; a coordinator that dies without one is reported with its log. */
async function follow(launcher: SshLauncher, head: string, jobId: string, pollMs: number, emit: (e: SurveyEvent) => void): Promise<Extract<SurveyLine, { survey: 'done' }>> {
  let seen = 0;
  // Bounded by polls, not by a clock: the coordinator's own timeouts (agents joining, each round) end it first.
  for (let poll = 0; poll < 3000; poll++) {
    // Whether the coordinator has exited is asked before its output is read, so a result written just
    // before it exited is never mistaken for none.
    const exited = poll % 4 === 3 ? await coordinatorExit(launcher, head, jobId) : null;
    const out = (await launcher.readJobFile(head, jobId, 'temp', 'coordinator.out')) ?? '';
    const lines = out.split('\n').filter((l) => l.startsWith('{"survey"'));
    for (const text of lines.slice(seen)) {
      const line = JSON.parse(text) as SurveyLine;
      if (line.survey === 'joined') emit({ host: line.host, step: 'agent', status: 'ok', detail: `joined (${line.joined} of ${line.agents})` });
      else if (line.survey === 'linking') emit({ host: 'links', step: 'connect', status: 'running', detail: 'agents linking up with every other' });
      else if (line.survey === 'probing') {
        emit({ host: 'links', step: 'connect', status: 'ok', detail: 'every pair linked' });
        emit({ host: 'links', step: 'probe', status: 'running', detail: 'measuring latency (8-byte round trips) and bandwidth (4 MiB messages), one pair at a time' });
      } else if (line.survey === 'failed') throw new SurveyError(`The link survey on ${head} failed: ${line.message}`);
      else return line;
    }
    seen = lines.length;
    if (exited) {
      const log = (await launcher.readJobFile(head, jobId, 'run', 'coordinator.log').catch(() => undefined)) ?? '';
      throw new SurveyError(`The survey coordinator on ${head} exited (${exited}) without a result. The end of ${remoteRunDir(jobId, launcher.settings.remoteDir)}/coordinator.log there:\n${log.trim().split('\n').slice(-10).join('\n') || '(empty)'}`);
    }
    await new Promise((r) => setTimeout(r, pollMs));
  }
  throw new SurveyError(`The link survey on ${head} gave no result; see ${remoteRunDir(jobId, launcher.settings.remoteDir)}/coordinator.log there.`);
}

/** "code N" once the head's coordinator has exited, else null. */
async function coordinatorExit(launcher: SshLauncher, head: string, jobId: string): Promise<string | null> {
  const state = (await launcher.status(jobId)).find((s) => s.target === head);
  const c = state?.processes.find((p) => p.name === 'coordinator');
  return c && !c.alive ? `code ${c.exitCode ?? '?'}` : null;
}
