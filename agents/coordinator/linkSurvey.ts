import { writeFileSync } from 'node:fs';
import { presetPlan } from '../../engine/plan/presets.js';
import { CoordinatorHelloSchema } from '../../engine/protocol/handshake.js';
import type { LinkSurveyConfig } from '../../engine/protocol/processConfig.js';
import type { Connection } from '../../engine/wire/connection.js';
import { listenAuthenticated, type Hello } from '../../engine/wire/handshake.js';
import { DEFAULT_PROBE } from '../runtime/probeLinks.js';
import { Generation } from './generation.js';
import { Membership } from './membership.js';

/** One line of the survey's progress and result on stdout, which the Node side polls. */
export type SurveyLine =
  | { survey: 'joined'; host: string; joined: number; agents: number }
  | { survey: 'linking' }
  | { survey: 'probing' }
  | { survey: 'done'; hosts: string[]; links: Array<{ from: string; to: string; alpha: number; beta: number; rttMs: number }>; probe: typeof DEFAULT_PROBE }
  | { survey: 'failed'; message: string };

/** Whether a coordinator config asks for a link survey (checked against its schema after). */
export function isLinkSurveyConfig(config: unknown): boolean {
  return typeof config === 'object' && config !== null && (config as { mode?: unknown }).mode === 'survey';
}

const report = (line: SurveyLine) => process.stdout.write(JSON.stringify(line) + '\n');

/**
 * Run a link survey and exit: wait for the agents, set them up as one data-parallel group (a full mesh
 * of links), ask each to probe its links (latency from 8-byte round trips, bandwidth from 4 MiB ones;
 * the lower rank of a pair leads, so every pair is measured once), and report the links by host.
 */
export async function runLinkSurvey(config: LinkSurveyConfig): Promise<void> {
  const timeoutSec = config.roundTimeoutSec ?? 120;
  const say = (message: string) => process.stderr.write(`[coordinator] ${message}\n`);
  const membership = new Membership();
  membership.onLog = (member, _level, message) => process.stderr.write(`[${member.host}] ${message}\n`);
  const server = await listenAuthenticated(
    config.listenHost ?? '127.0.0.1',
    0,
    config.secret,
    (conn: Connection, raw: Hello) => {
      const hello = CoordinatorHelloSchema.safeParse(raw);
      if (!hello.success || hello.data.role !== 'agent') return conn.close();
      const member = membership.add(conn, hello.data);
      report({ survey: 'joined', host: member.host, joined: membership.alive().length, agents: config.agents });
    },
    (peer, reason) => say(`refused a connection from ${peer}: ${reason}`),
  );
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('The coordinator has no TCP address.');
  process.stdout.write(JSON.stringify({ listening: address.port }) + '\n');

  const end = (code: number) => {
    membership.stop();
    for (const m of membership.alive()) m.conn.send({ type: 'shutdown' });
    server.close();
    setTimeout(() => process.exit(code), 200);
  };
  try {
    await withTimeout(membership.whenAlive(config.agents), timeoutSec, () => {
      const joined = membership.alive().map((m) => m.host);
      return `Only ${joined.length} of ${config.agents} agents joined within ${timeoutSec} s (${joined.join(', ') || 'none'}). An agent that cannot reach ${config.listenHost}:${address.port} (a firewall between the hosts) never joins: check the missing hosts' agent logs.`;
    });
    membership.watch(10);
    const members = membership.alive().slice(0, config.agents);
    const plan = presetPlan(config.model, `pp1-dp${members.length}`, { globalBatch: 8 * members.length });
    const gen = new Generation(1, plan, members, membership, timeoutSec, 1);
    report({ survey: 'linking' });
    const peers = members.map((m, rank) => ({ rank, host: m.peerHost, port: m.peerPort }));
    await gen.ask((rank) => ({ type: 'setup', generation: 1, rank, placement: gen.layout[rank], plan, model: config.model, peers, overlapGradients: false }));

    report({ survey: 'probing' });
    const replies = await gen.ask({ type: 'profile', layers: 'none', links: true, allReduceBytes: [], batches: [1], repeats: 1 });
    const measured = replies.flatMap((m) => m.header.links);
    const links = measured.map((l) => ({ from: members[l.from].host, to: members[l.to].host, alpha: l.alpha, beta: l.beta, rttMs: l.rttMs }));
    const result: SurveyLine = { survey: 'done', hosts: members.map((m) => m.host), links, probe: DEFAULT_PROBE };
    if (config.resultPath) writeFileSync(config.resultPath, JSON.stringify(result, null, 2) + '\n');
    report(result);
    gen.close();
    end(0);
  } catch (err) {
    report({ survey: 'failed', message: (err as Error).message });
    say((err as Error).message);
    end(1);
  }
}

function withTimeout<T>(promise: Promise<T>, seconds: number, message: () => string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([promise, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(message())), seconds * 1000)))]).finally(() => clearTimeout(timer));
}
