import { mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { writeCheckpoint, type CheckpointHeader } from '../../engine/wire/checkpointFile.js';
import { checkpointName, latestCheckpointIn } from '../../engine/wire/checkpointFolder.js';
import { resumePointAfterRestart } from '../../agents/coordinator/restart.js';

const dir = mkdtempSync(join(tmpdir(), 'shoal-ckpt-folder-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const header = (step: number): CheckpointHeader => ({
  format: 'shoal-checkpoint',
  version: 1,
  jobId: 'job-test',
  createdAt: '2026-12-01T00:00:00.000Z',
  model: 'mlp',
  plan: {},
  step,
  optimizer: { kind: 'sgd', step },
  tensors: [{ name: 'd/kernel', shape: [4], offset: 0, length: 4 }],
});

function save(step: number): string {
  const file = join(dir, checkpointName(step));
  writeCheckpoint(file, header(step), Float32Array.from([1, 2, 3, step]));
  return file;
}

describe('the newest checkpoint of a folder', () => {
  it('skips a corrupt newest checkpoint, naming it, for the newest intact one', () => {
    save(2);
    const intact = save(4);
    const flipped = save(6);
    const bytes = readFileSync(flipped);
    bytes[bytes.length - 40] ^= 0xff; // one body byte: only the checksum can tell
    writeFileSync(flipped, bytes);
    const truncated = save(8);
    truncateSync(truncated, 30);
    const warnings: string[] = [];
    expect(latestCheckpointIn(dir, (m) => warnings.push(m))).toBe(intact);
    expect(warnings).toHaveLength(2);
    expect(warnings[0]).toContain(`Skipping checkpoint ${truncated}:`);
    expect(warnings[1]).toContain(`Skipping checkpoint ${flipped}: is corrupted or truncated (its SHA-256 checksum does not match)`);
  });

  it('is null, after warning about each, when every checkpoint is corrupt', () => {
    const only = mkdtempSync(join(dir, 'all-bad-'));
    writeFileSync(join(only, checkpointName(1)), 'not a checkpoint');
    const warnings: string[] = [];
    expect(latestCheckpointIn(only, (m) => warnings.push(m))).toBeNull();
    expect(warnings).toEqual([expect.stringMatching(/step-0000001\.ckpt: is not a Shoal checkpoint.*No older checkpoint is left/)]);
  });

  it('a restarted coordinator continues from the newest intact checkpoint, warning about the corrupt one', () => {
    const folder = mkdtempSync(join(dir, 'restart-'));
    const older = join(folder, checkpointName(3));
    writeCheckpoint(older, header(3), Float32Array.from([1, 2, 3, 3]));
    const newer = join(folder, checkpointName(5));
    writeCheckpoint(newer, header(5), Float32Array.from([1, 2, 3, 5]));
    truncateSync(newer, 100); // the crash cut it short
    const warnings: string[] = [];
    process.env.SHOAL_RESTART = '1';
    try {
      expect(resumePointAfterRestart(folder, undefined, (m) => warnings.push(m))).toBe(older);
    } finally {
      delete process.env.SHOAL_RESTART;
    }
    expect(warnings).toEqual([expect.stringContaining(`Skipping checkpoint ${newer}`)]);
  });
});
