import { createHash } from 'node:crypto';
import { closeSync, fsyncSync, openSync, readFileSync, renameSync, rmSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { z } from 'zod';
import { readRecord, type RecordFormat } from '../protocol/versionedRecord.js';

/**
 * Checkpoint files: `SHOALCKPT\n`, a u32 header length, the JSON header, the float32 body, and a
 * SHA-256 of header + body. Written to a temporary file, fsynced and renamed (then the folder fsynced),
 * so a crash leaves either the old checkpoint or the new one, never half of one; read back only after
 * the length and the checksum match, so a truncated or corrupted file is reported, never loaded.
 */
const MAGIC = Buffer.from('SHOALCKPT\n', 'utf8');
const DIGEST_BYTES = 32;

const CheckpointTensorSchema = z.object({
  /** Parameter name, e.g. `dense_1/kernel`. */
  name: z.string(),
  /** Optimizer slot (`m`, `v`, `velocity`) or absent for the parameter's value. */
  slot: z.string().optional(),
  shape: z.array(z.number().int().min(0)),
  /** Offset and length in float32 elements within the body. */
  offset: z.number().int().min(0),
  length: z.number().int().min(0),
});
export type CheckpointTensor = z.infer<typeof CheckpointTensorSchema>;

/** The version of the checkpoint header this Shoal writes; change it, with an upgrade, when the schema changes. */
export const CHECKPOINT_VERSION = 1;

export const CheckpointHeaderSchema = z.object({
  format: z.literal('shoal-checkpoint'),
  version: z.literal(CHECKPOINT_VERSION),
  jobId: z.string(),
  createdAt: z.string(),
  model: z.string(),
  /** The plan the job ran when it wrote the checkpoint (a resume may use another, and checks it then). */
  plan: z.unknown(),
  /** Optimizer steps completed; training resumes with step `step` (0-based), so data order continues. */
  step: z.number().int().min(0),
  optimizer: z.object({ kind: z.string(), step: z.number() }),
  tensors: z.array(CheckpointTensorSchema),
});
export type CheckpointHeader = z.infer<typeof CheckpointHeaderSchema>;

/** Checkpoints carried version 1 from the start: there is nothing older to upgrade. */
export const CHECKPOINT_HEADER_FORMAT: RecordFormat<typeof CheckpointHeaderSchema> = { what: 'checkpoint header', version: CHECKPOINT_VERSION, schema: CheckpointHeaderSchema, upgrades: {} };

export class CheckpointError extends Error {
  constructor(
    readonly file: string,
    readonly problem: string,
  ) {
    super(`Checkpoint ${file} ${problem}. It was not loaded; resume from an earlier checkpoint in the same folder.`);
    this.name = 'CheckpointError';
  }
}

export function writeCheckpoint(file: string, header: CheckpointHeader, body: Float32Array): number {
  const headerBytes = Buffer.from(JSON.stringify(header), 'utf8');
  const length = Buffer.alloc(4);
  length.writeUInt32BE(headerBytes.length, 0);
  const bodyBytes = Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  const digest = createHash('sha256').update(headerBytes).update(bodyBytes).digest();
  const tmp = `${file}.tmp-${process.pid}`;
  try {
    const fd = openSync(tmp, 'w', 0o600);
    try {
      for (const part of [MAGIC, length, headerBytes, bodyBytes, digest]) writeSync(fd, part);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, file);
  } catch (err) {
    try {
      rmSync(tmp, { force: true });
    } catch {
      // Nothing was created (e.g. the folder itself is missing): nothing to clean up.
    }
    const code = (err as NodeJS.ErrnoException).code;
    const why = code === 'ENOSPC' ? 'the disk is full' : code === 'EACCES' || code === 'EROFS' ? 'the folder is not writable' : code === 'ENOENT' ? 'its folder no longer exists' : null;
    // The OS error as it was, with the friendlier reading: the user fixes the one, support reads the other.
    const os = (err as Error).message;
    // The OS error travels as the cause: a caller can tell a full disk (worth waiting out) from the rest.
    throw new Error(`Cannot write checkpoint ${file}: ${why ? `${why} (${os})` : os}. Older checkpoints in ${dirname(file)} are intact; free space, make the folder writable or choose another run folder (--out).`, { cause: err });
  }
  // The rename itself is durable only once the folder's entry is on disk.
  const dirFd = openSync(dirname(file), 'r');
  try {
    fsyncSync(dirFd);
  } finally {
    closeSync(dirFd);
  }
  return MAGIC.length + 4 + headerBytes.length + bodyBytes.length + DIGEST_BYTES;
}

/** Why `file` is not an intact checkpoint (what readCheckpoint would refuse), or null when it is one. */
export function verifyCheckpoint(file: string): string | null {
  try {
    readCheckpoint(file);
    return null;
  } catch (err) {
    return err instanceof CheckpointError ? err.problem : (err as Error).message;
  }
}

export function readCheckpoint(file: string): { header: CheckpointHeader; body: Float32Array } {
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch (err) {
    throw new CheckpointError(file, `cannot be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
  if (bytes.length < MAGIC.length + 4 + DIGEST_BYTES || !bytes.subarray(0, MAGIC.length).equals(MAGIC)) {
    throw new CheckpointError(file, 'is not a Shoal checkpoint (its first bytes are wrong, or it is truncated)');
  }
  const headerLength = bytes.readUInt32BE(MAGIC.length);
  const headerStart = MAGIC.length + 4;
  const bodyStart = headerStart + headerLength;
  const bodyEnd = bytes.length - DIGEST_BYTES;
  if (bodyStart > bodyEnd) throw new CheckpointError(file, 'is truncated (its header runs past the end of the file)');
  const digest = createHash('sha256').update(bytes.subarray(headerStart, bodyEnd)).digest();
  if (!digest.equals(bytes.subarray(bodyEnd))) throw new CheckpointError(file, 'is corrupted or truncated (its SHA-256 checksum does not match)');
  let json: unknown;
  try {
    json = JSON.parse(bytes.toString('utf8', headerStart, bodyStart));
  } catch {
    throw new CheckpointError(file, 'has a header that is not JSON');
  }
  let header: CheckpointHeader;
  try {
    header = readRecord(CHECKPOINT_HEADER_FORMAT, json, 'its header');
  } catch (err) {
    throw new CheckpointError(file, `cannot be used: ${(err as Error).message.replace(/\.$/, '')}`);
  }
  const bodyBytes = bodyEnd - bodyStart;
  const expected = header.tensors.reduce((n, t) => Math.max(n, t.offset + t.length), 0) * 4;
  if (bodyBytes !== expected) throw new CheckpointError(file, `has a body of ${bodyBytes} bytes where its header describes ${expected}`);
  const body = new Float32Array(bytes.buffer.slice(bytes.byteOffset + bodyStart, bytes.byteOffset + bodyEnd));
  return { header, body };
}
