import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { zooModel } from '../../engine/model/zoo.js';
import type { OptimizerConfig, Plan } from '../../engine/plan/plan.js';
import { presetPlan } from '../../engine/plan/presets.js';
import type { JobEvent } from '../../engine/protocol/events.js';
import { LocalJob } from '../../engine/node/jobs/localJob.js';
import { flood, type FloodResult } from '../support/connectionFlood.js';
import { listeningPorts, watchMemory, type MemoryKiB } from '../support/procStatus.js';
import { maxRelativeError, readParams } from './paramsFile.js';

/**
 * Nothing unauthenticated can hurt a job. While a two-stage job trains, 500 connections
 * that never authenticate (silence, garbage, 400 MiB length prefixes, a trickle of bytes, frames with
 * made-up tags, headers that are not objects, wrong proofs) hit the coordinator and both agents' peer
 * listeners from eight loopback addresses. The job ends with the parameters of an undisturbed run, the
 * listeners close every such connection themselves, and the real coordinator process's peak RSS
 * (/proc/<pid>/status) stays within 50 MB of the undisturbed run's.
 */
const K = 16;
const model = zooModel('mlp');
const sgd: OptimizerConfig = { kind: 'sgd', learningRate: 0.05, momentum: 0.9 };
const plan: Plan = presetPlan(model, 'pp2-dp1', { optimizer: sgd });
const FLOOD_CONNECTIONS = 500;
const SOURCES = Array.from({ length: 8 }, (_, i) => `127.0.0.${i + 2}`);
const RSS_MARGIN_KIB = 50 * 1024;
let root: string;

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'shoal-flood-'));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

interface Run {
  events: JobEvent[];
  params: Map<string, Float32Array>;
  coordinator: MemoryKiB;
  coordinatorCommand: string;
  /** Listening sockets of the coordinator and the agents that the flood targeted. */
  listeners: number;
  flood?: FloodResult;
  floodFrom?: number;
}

async function run(tag: string, attack: boolean): Promise<Run> {
  const events: JobEvent[] = [];
  const dir = join(root, tag);
  let watcher: ReturnType<typeof watchMemory> | undefined;
  let attacked: Promise<FloodResult> | undefined;
  let floodFrom: number | undefined;
  let coordinatorCommand = '';
  let listeners = 0;
  const job: LocalJob = new LocalJob({
    model,
    plan,
    agents: 2,
    steps: K,
    runDir: dir,
    checkpointEverySteps: K,
    evalEverySteps: K,
    profile: false,
    timelineEverySteps: 0,
    // Slower passes (sleeps; the arithmetic is unchanged) keep the job training while the flood runs.
    agentSlowdowns: [2, 2],
    onEvent: (e) => {
      events.push(e);
      if (!watcher && job.coordinatorPid) {
        watcher = watchMemory(job.coordinatorPid);
        coordinatorCommand = readFileSync(`/proc/${job.coordinatorPid}/cmdline`, 'utf8').replace(/\0/g, ' ');
      }
      if (attack && !attacked && e.type === 'step' && e.step >= 2) {
        floodFrom = e.step;
        const agentPids = events.flatMap((a) => (a.type === 'agent' ? [a.pid] : []));
        const pids = [job.coordinatorPid!, ...agentPids];
        const targets = pids.flatMap((pid) => listeningPorts(pid).map((port) => ({ host: '127.0.0.1', port })));
        listeners = targets.length;
        attacked = flood(targets, FLOOD_CONNECTIONS, SOURCES, 40_000);
      }
    },
  });
  await job.start().catch((err: Error) => {
    console.log(events.flatMap((e) => (e.type === 'log' ? [`${e.host} ${e.rank} ${e.message}`] : [])).join('\n'));
    throw err;
  });
  await job.exited();
  const coordinator = watcher!.stop();
  return { events, params: readParams(join(dir, 'checkpoints')), coordinator, coordinatorCommand, listeners, flood: await attacked, floodFrom };
}

describe('a flood of unauthenticated connections during training', () => {
  let quiet: Run;

  it('an undisturbed run, for reference', async () => {
    quiet = await run('quiet', false);
    expect(quiet.events.at(-1)).toMatchObject({ type: 'final', steps: K });
    // The real coordinator process, not a wrapper: its memory is what is measured.
    expect(quiet.coordinatorCommand).toMatch(/shoal-agent\.cjs coordinator/);
    expect(quiet.coordinator.hwm).toBeGreaterThan(0);
  });

  it('500 hostile connections: same parameters, every one closed by the listeners, coordinator RSS within 50 MB', async () => {
    const loud = await run('flooded', true);
    expect(loud.events.at(-1)).toMatchObject({ type: 'final', steps: K });
    expect(loud.floodFrom).toBeLessThan(K);
    expect(loud.listeners, 'the coordinator and both agents listen').toBeGreaterThanOrEqual(3);
    expect(loud.flood).toMatchObject({ opened: FLOOD_CONNECTIONS, closedByListener: FLOOD_CONNECTIONS });
    for (const [name, expected] of quiet.params) expect(maxRelativeError(loud.params.get(name)!, expected), name).toBeLessThanOrEqual(1e-6);
    expect(loud.params.size).toBe(quiet.params.size);
    const note = `coordinator VmHWM ${loud.coordinator.hwm} KiB flooded vs ${quiet.coordinator.hwm} KiB quiet; VmRSS peak ${loud.coordinator.rss} vs ${quiet.coordinator.rss} KiB; flood wrote ${loud.flood!.bytesWritten} bytes`;
    console.log(note);
    expect(loud.coordinator.hwm - quiet.coordinator.hwm, note).toBeLessThan(RSS_MARGIN_KIB);
    expect(loud.coordinator.rss - quiet.coordinator.hwm, note).toBeLessThan(RSS_MARGIN_KIB);
    // Refusals are logged with the peer's address, by the coordinator and by the agents' peer listeners.
    const logs = loud.events.flatMap((e) => (e.type === 'log' ? [e] : []));
    expect(logs.some((e) => e.host === 'coordinator' && /^refused a connection from 127\.0\.0\.\d+:\d+: /.test(e.message))).toBe(true);
    for (const agent of ['local-0', 'local-1']) {
      expect(logs.some((e) => e.host === agent && /^refused a peer connection from 127\.0\.0\.\d+:\d+: /.test(e.message)), agent).toBe(true);
    }
  });
});

