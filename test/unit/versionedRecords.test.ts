import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DEPLOY_RECORD_VERSION, readDeployRecord, type DeployRecord } from '../../engine/node/jobs/deployRecord.js';
import { readRunRecord, RUN_RECORD_VERSION } from '../../engine/node/jobs/runRecord.js';
import { createRunDir } from '../../engine/node/jobs/runStore.js';
import { releaseRunLock } from '../../engine/node/jobs/runLock.js';
import { loadModel } from '../../engine/node/modelRef.js';
import { presetPlan } from '../../engine/plan/presets.js';
import { readRecord, type RecordFormat } from '../../engine/protocol/versionedRecord.js';
import { readCheckpoint, writeCheckpoint, type CheckpointHeader } from '../../engine/wire/checkpointFile.js';
import { z } from 'zod';

/** Records on disk carry a version: older files are upgraded, newer ones refused with their version named. */
const dir = mkdtempSync(join(tmpdir(), 'shoal-records-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const plan = presetPlan(loadModel('mlp'), 'pp1-dp1');
/** job.json as Shoal wrote it before records carried a version. */
const previousFormat = { jobId: 'job-old', createdAt: '2026-01-01T00:00:00.000Z', model: 'mlp', plan, agents: 1, steps: 4 };

function runFolder(name: string, record: object): string {
  const run = join(dir, name);
  mkdirSync(run, { recursive: true });
  writeFileSync(join(run, 'job.json'), JSON.stringify(record));
  return run;
}

describe('run records (job.json)', () => {
  it('reads a file of the previous format (no version) as today\'s record', () => {
    expect(readRunRecord(runFolder('old', previousFormat))).toEqual(previousFormat);
  });

  it("keeps a version 1 run's validation split as it was taken then: a seeded random hold-out", () => {
    const losses = [{ output: 'out', loss: 'sparseCategoricalCrossentropy' as const, weight: 1, fromLogits: false, metric: 'sparseCategoricalAccuracy' as const }];
    const training = { data: { kind: 'npy', dir: '/data', validationSplit: 0.2 }, losses, trainSamples: 80, validationSamples: 20 };
    const read = readRunRecord(runFolder('v1', { ...previousFormat, version: 1, training }));
    expect(read.training?.data).toEqual({ kind: 'npy', dir: '/data', validationSplit: 0.2, validationHoldOut: 'seededRandom' });
    // Written now, a split means model.fit's last rows: nothing is added.
    const now = readRunRecord(runFolder('v2', { ...previousFormat, version: RUN_RECORD_VERSION, training }));
    expect(now.training?.data).toEqual({ kind: 'npy', dir: '/data', validationSplit: 0.2 });
  });

  it('writes the version, and reads back what it wrote', () => {
    const run = createRunDir({ ...previousFormat, jobId: 'job-new' }, join(dir, 'new'));
    releaseRunLock(run);
    expect(JSON.parse(readFileSync(join(run, 'job.json'), 'utf8')).version).toBe(RUN_RECORD_VERSION);
    expect(readRunRecord(run)).toMatchObject({ ...previousFormat, jobId: 'job-new' });
  });

  it('refuses a newer version, naming it, and a damaged record, naming the field', () => {
    expect(() => readRunRecord(runFolder('newer', { ...previousFormat, version: RUN_RECORD_VERSION + 1 }))).toThrow(
      new RegExp(`job\\.json is a run record \\(job\\.json\\) of version ${RUN_RECORD_VERSION + 1}; this Shoal reads versions up to ${RUN_RECORD_VERSION}\\. .*update Shoal`),
    );
    expect(() => readRunRecord(runFolder('damaged', { ...previousFormat, agents: 'two' }))).toThrow(/job\.json is not a valid run record \(job\.json\): agents: .*number/);
    expect(() => readRunRecord(runFolder('not-json', {}).replace(/$/, '-missing'))).toThrow(/cannot be read as a run record/);
  });
});

describe('deploy records (deploy.json)', () => {
  const record: DeployRecord = {
    version: DEPLOY_RECORD_VERSION,
    jobId: 'job-20260101000000-abcdef',
    createdAt: '2026-01-01T00:00:00.000Z',
    launcher: 'local',
    cluster: 'local',
    hosts: [],
    head: 'localhost',
    model: 'mlp',
    steps: 4,
    coordinator: { listenHost: '127.0.0.1', port: 4000, pid: 10 },
    processes: [{ target: 'localhost', name: 'coordinator', role: 'coordinator', pid: 10, port: 4000 }],
  };
  const file = (name: string, json: object) => {
    const path = join(dir, `${name}.deploy.json`);
    writeFileSync(path, JSON.stringify(json));
    return path;
  };

  it('reads what Shoal writes and refuses a newer version by name', () => {
    expect(readDeployRecord(file('ok', record))).toEqual(record);
    expect(() => readDeployRecord(file('newer', { ...record, version: 7 }))).toThrow(/is a deploy record \(deploy\.json\) of version 7; this Shoal reads versions up to 2/);
    expect(() => readDeployRecord(file('bad', { ...record, launcher: 'carrier-pigeon' }))).toThrow(/not a valid deploy record \(deploy\.json\): launcher: /);
  });
});

describe('checkpoint headers', () => {
  const header: CheckpointHeader = { format: 'shoal-checkpoint', version: 1, jobId: 'j', createdAt: '', model: 'mlp', plan: {}, step: 1, optimizer: { kind: 'sgd', step: 1 }, tensors: [{ name: 'w', shape: [2], offset: 0, length: 2 }] };
  it('refuses a header of a newer version with the version named; a header without its fields says which', () => {
    const newer = join(dir, 'newer.ckpt');
    writeCheckpoint(newer, { ...header, version: 2 } as unknown as CheckpointHeader, new Float32Array(2));
    expect(() => readCheckpoint(newer)).toThrow(/newer\.ckpt cannot be used: its header is a checkpoint header of version 2; this Shoal reads versions up to 1/);
    const broken = join(dir, 'broken.ckpt');
    writeCheckpoint(broken, { ...header, tensors: undefined } as unknown as CheckpointHeader, new Float32Array(0));
    expect(() => readCheckpoint(broken)).toThrow(/broken\.ckpt cannot be used: its header is not a valid checkpoint header: tensors: /);
  });
});

describe('readRecord upgrades', () => {
  // A format at version 2 whose version 1 named the field differently, and whose version 0 had no version.
  const format: RecordFormat<z.ZodType<{ version: 2; rows: number }>> = {
    what: 'test record',
    version: 2,
    schema: z.object({ version: z.literal(2), rows: z.number() }),
    upgrades: { 0: (old) => old, 1: ({ count, ...rest }) => ({ ...rest, rows: count }) },
  };
  it('runs every upgrade from the file\'s version to today\'s, in order', () => {
    expect(readRecord(format, { count: 3 }, 'f')).toEqual({ version: 2, rows: 3 });
    expect(readRecord(format, { version: 1, count: 4 }, 'f')).toEqual({ version: 2, rows: 4 });
    expect(readRecord(format, { version: 2, rows: 5 }, 'f')).toEqual({ version: 2, rows: 5 });
    expect(() => readRecord(format, { version: 'x' }, 'f')).toThrow(/its version is "x"/);
    expect(() => readRecord({ ...format, upgrades: {} }, { version: 1 }, 'f')).toThrow(/f is a test record of version 1, which this Shoal no longer reads/);
  });
});
