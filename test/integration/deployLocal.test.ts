import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { JobEvent } from '../../engine/protocol/events.js';
import { runAttachCommand } from '../../engine/node/commands/attach.js';
import { runDeployCommand } from '../../engine/node/commands/deploy.js';
import { runStopCommand } from '../../engine/node/commands/stop.js';
import { TFJS_VERSION } from '../../engine/node/deploy/gpuRuntime.js';
import { listDeployRecords } from '../../engine/node/jobs/deployRecord.js';
import { launcherFor } from '../../engine/node/jobs/launcherFor.js';
import { useTempHome } from '../support/homes.js';
import { runCommand as run, jsonLines } from '../support/commandRun.js';

/** The same deploy/attach/stop path with the LocalLauncher: this machine as a one-host cluster. */

let env: ReturnType<typeof useTempHome>;

beforeAll(() => {
  env = useTempHome();
  process.env.SHOAL_DATA_DIR = join(env.home, 'data');
});

afterAll(async () => {
  for (const { record } of listDeployRecords()) await launcherFor(record).stop(record.jobId).catch(() => {});
  delete process.env.SHOAL_DATA_DIR;
  env?.restore();
});


test('deploy --cluster local follows the job to its end; the coordinator listens on loopback only', async () => {
  const d = await run(runDeployCommand, '--cluster', 'local', '--model', 'mlp', '--plan', 'pp1-dp2', '--steps', '20', '--json');
  expect(d.err).not.toContain('shoal deploy:');
  expect(d.code).toBe(0);
  const events = jsonLines<JobEvent & { jobId?: string }>(d.out);
  const jobId = events[0].jobId!;
  expect(events.filter((e) => e.type === 'step')).toHaveLength(20);
  expect(events.at(-1)?.type).toBe('final');
  const [{ record }] = listDeployRecords().filter((r) => r.record.jobId === jobId);
  expect(record.coordinator.listenHost).toBe('127.0.0.1');
  expect(readFileSync(join(env.home, '.shoal', 'runs', jobId, 'events.jsonl'), 'utf8').trim().split('\n').length).toBe(events.length - 1);
});

test('a detached local job is stopped by shoal stop, which keeps its history and removes its secret', async () => {
  const d = await run(runDeployCommand, '--cluster', 'local', '--model', 'mlp', '--plan', 'pp1-dp2', '--steps', '100000', '--detach', '--json');
  expect(d.code).toBe(0);
  const { jobId } = jsonLines<{ jobId: string }>(d.out)[0];
  const seen = await run(runAttachCommand, jobId, '--json', '--no-follow');
  expect(seen.code).toBe(0);
  expect(jsonLines<JobEvent>(seen.out)[0]).toMatchObject({ type: 'status', state: 'starting' });
  expect((await run(runStopCommand, jobId)).code).toBe(0);
  expect(existsSync(join(env.home, '.shoal', 'jobs', jobId))).toBe(false);
  const history = jsonLines<JobEvent>((await run(runAttachCommand, jobId, '--json', '--no-follow')).out);
  expect(history.at(-1)).toMatchObject({ type: 'status', state: 'stopped' });
});

test('the GPU backend installed on hosts is the version of the bundled tfjs-core', () => {
  const core = JSON.parse(readFileSync(join(__dirname, '..', '..', 'node_modules', '@tensorflow', 'tfjs-core', 'package.json'), 'utf8')) as { version: string };
  expect(TFJS_VERSION).toBe(core.version);
});
