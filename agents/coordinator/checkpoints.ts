import { mkdirSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Plan } from '../../engine/plan/plan.js';
import { bytesToFloats, type Message } from '../comm/frame.js';
import { readCheckpoint, writeCheckpoint, type CheckpointHeader, type CheckpointTensor } from './checkpointFile.js';

/** Checkpoints kept in a folder; older ones are removed once a newer one is safely on disk. */
const KEEP = 3;

export const checkpointName = (step: number) => `step-${String(step).padStart(7, '0')}.ckpt`;

/**
 * Assemble one checkpoint from the snapshots of every stage's first replica and write it atomically.
 * Returns the file and its size.
 */
export function saveCheckpoint(dir: string, replies: Message[], meta: { jobId: string; plan: Plan; model: string; step: number }): { file: string; bytes: number } {
  const parts = replies.filter((m) => Array.isArray(m.header.tensors)).sort((a, b) => Number(a.header.stage) - Number(b.header.stage));
  const tensors: CheckpointTensor[] = [];
  const arrays: Float32Array[] = [];
  let offset = 0;
  for (const part of parts) {
    const values = bytesToFloats(part.payload);
    let local = 0;
    for (const t of part.header.tensors as Array<Omit<CheckpointTensor, 'offset' | 'length'>>) {
      const length = t.shape.reduce((a, b) => a * b, 1);
      tensors.push({ ...t, offset: offset + local, length });
      local += length;
    }
    arrays.push(values);
    offset += values.length;
  }
  const body = new Float32Array(offset);
  let at = 0;
  for (const a of arrays) {
    body.set(a, at);
    at += a.length;
  }
  const header: CheckpointHeader = {
    format: 'shoal-checkpoint',
    version: 1,
    jobId: meta.jobId,
    createdAt: new Date().toISOString(),
    model: meta.model,
    plan: meta.plan,
    step: meta.step,
    optimizer: { kind: meta.plan.optimizer.kind, step: Number(parts[0]?.header.optimizerStep ?? 0) },
    tensors,
  };
  mkdirSync(dir, { recursive: true });
  const file = join(dir, checkpointName(meta.step));
  const bytes = writeCheckpoint(file, header, body);
  const old = readdirSync(dir).filter((f) => /^step-\d+\.ckpt$/.test(f)).sort();
  for (const f of old.slice(0, Math.max(0, old.length - KEEP))) rmSync(join(dir, f), { force: true });
  return { file, bytes };
}

/** Read and check a checkpoint, and cut it into what each stage of `plan` needs (by layer ids). */
export function checkpointForStages(file: string, plan: Plan, model: string): { header: CheckpointHeader; perStage: Array<{ tensors: CheckpointTensor[]; body: Float32Array }> } {
  const { header, body } = readCheckpoint(file);
  if (header.model !== model) throw new Error(`Checkpoint ${file} is for model "${header.model}", not "${model}".`);
  const perStage = plan.stages.map((stage) => {
    const layers = new Set(stage.layers);
    const own = header.tensors.filter((t) => layers.has(t.name.slice(0, t.name.lastIndexOf('/'))));
    const size = own.reduce((n, t) => n + t.length, 0);
    const values = new Float32Array(size);
    let at = 0;
    const tensors = own.map((t) => {
      values.set(body.subarray(t.offset, t.offset + t.length), at);
      const moved = { ...t, offset: at };
      at += t.length;
      return moved;
    });
    return { tensors, body: values };
  });
  return { header, perStage };
}
