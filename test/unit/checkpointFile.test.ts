import { mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readCheckpoint, writeCheckpoint, type CheckpointHeader } from '../../engine/wire/checkpointFile.js';

const dir = mkdtempSync(join(tmpdir(), 'shoal-ckpt-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const header: CheckpointHeader = {
  format: 'shoal-checkpoint',
  version: 1,
  jobId: 'job-test',
  createdAt: '2026-11-29T00:00:00.000Z',
  model: 'mlp',
  plan: { note: 'any plan' },
  step: 42,
  optimizer: { kind: 'adam', step: 42 },
  tensors: [
    { name: 'd/kernel', shape: [2, 3], offset: 0, length: 6 },
    { name: 'd/kernel', slot: 'm', shape: [2, 3], offset: 6, length: 6 },
  ],
};
const body = Float32Array.from({ length: 12 }, (_, i) => i * 0.5 - 1);

function written(name: string): string {
  const file = join(dir, name);
  writeCheckpoint(file, header, body);
  return file;
}

describe('checkpoint files', () => {
  it('round-trip header and body exactly', () => {
    const { header: h, body: b } = readCheckpoint(written('ok.ckpt'));
    expect(h).toEqual(header);
    expect(Array.from(b)).toEqual(Array.from(body));
  });

  it('a truncated file is reported with its name, never loaded', () => {
    const file = written('truncated.ckpt');
    truncateSync(file, readFileSync(file).length - 10);
    expect(() => readCheckpoint(file)).toThrow(new RegExp(`Checkpoint ${file.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} is corrupted or truncated`));
  });

  it('a flipped byte is caught by the checksum', () => {
    const file = written('flipped.ckpt');
    const bytes = readFileSync(file);
    bytes[bytes.length - 40] ^= 0xff;
    writeFileSync(file, bytes);
    expect(() => readCheckpoint(file)).toThrow(/checksum does not match/);
  });

  it('a file that is not a checkpoint says so', () => {
    const file = join(dir, 'notes.txt');
    writeFileSync(file, 'hello, this is not a checkpoint at all, just some text that is long enough');
    expect(() => readCheckpoint(file)).toThrow(/is not a Shoal checkpoint/);
    expect(() => readCheckpoint(join(dir, 'missing.ckpt'))).toThrow(/cannot be read \(ENOENT\)/);
  });

  it('leaves no temporary file behind', () => {
    written('clean.ckpt');
    expect(readFileSync(join(dir, 'clean.ckpt')).length).toBeGreaterThan(0);
    expect(() => readFileSync(join(dir, `clean.ckpt.tmp-${process.pid}`))).toThrow();
  });
});

describe('checkpoint write failures', () => {
  it('say which file could not be written and that older checkpoints are intact, leaving no temporary file', () => {
    const blocker = join(dir, 'not-a-folder');
    writeFileSync(blocker, 'a file where a folder should be');
    const file = join(blocker, 'step-0000001.ckpt');
    expect(() => writeCheckpoint(file, header, body)).toThrow(/^Cannot write checkpoint .*step-0000001\.ckpt: .*Older checkpoints in .* are intact/);
  });
});
