import type { Plan } from '../../engine/plan/plan.js';
import { placeSlice } from '../exec/tensorParallel/shardedParams.js';
import { bytesToFloats, type Message } from '../../engine/wire/frame.js';
import type { CheckpointTensor } from '../../engine/wire/checkpointFile.js';

/**
 * A job's model state in the coordinator's memory, in the checkpoint's layout: whole tensors by name
 * (parameters, and optimizer slots by `slot`), one flat body. It moves state between generations of a
 * job (a resize, a lost agent) exactly as a checkpoint file moves it between runs.
 */
export interface JobState {
  tensors: CheckpointTensor[];
  body: Float32Array;
  optimizerStep: number;
}

type Described = Omit<CheckpointTensor, 'offset' | 'length'>;

function concat(parts: Array<{ tensors: Described[]; values: Float32Array }>): { tensors: CheckpointTensor[]; body: Float32Array } {
  const tensors: CheckpointTensor[] = [];
  const body = new Float32Array(parts.reduce((n, p) => n + p.values.length, 0));
  let offset = 0;
  for (const part of parts) {
    let local = 0;
    for (const t of part.tensors) {
      const length = t.shape.reduce((a, b) => a * b, 1);
      tensors.push({ ...t, offset: offset + local, length });
      local += length;
    }
    body.set(part.values, offset);
    offset += part.values.length;
  }
  return { tensors, body };
}

/** The state from a snapshot round: every stage's speaker sent its whole tensors (others sent none). */
export function stateFromSnapshots(replies: Message[]): JobState {
  const parts = replies.filter((m) => Array.isArray(m.header.tensors)).sort((a, b) => Number(a.header.stage) - Number(b.header.stage));
  const { tensors, body } = concat(parts.map((m) => ({ tensors: m.header.tensors as Described[], values: bytesToFloats(m.payload) })));
  return { tensors, body, optimizerStep: Number(parts[0]?.header.optimizerStep ?? 0) };
}

interface LocalTensor extends Described {
  split?: { axis: number; parts: number; index: number; fullShape: number[] };
}

/**
 * The state rebuilt from the parts survivors hold alone (after a lost agent): for each stage and
 * tensor-parallel shard, the first surviving replica's tensors; split tensors are put back together
 * from their shards. Throws, naming what is missing, when a stage or shard has no survivor or the
 * optimizer state was sharded (ZeRO) — the caller then falls back to a checkpoint.
 */
export function stateFromLocalParts(replies: Message[], plan: Plan): JobState {
  if (replies.some((m) => m.header.complete !== true)) {
    throw new Error(`the optimizer state is sharded over the data-parallel replicas (ZeRO ${plan.zero}), so the lost agent's part of it is gone`);
  }
  const parts: Array<{ tensors: Described[]; values: Float32Array }> = [];
  plan.stages.forEach((stage, s) => {
    const byShard = Array.from({ length: stage.tensorParallel }, (_, k) =>
      replies.filter((m) => Number(m.header.stage) === s && Number(m.header.shard) === k).sort((a, b) => Number(a.header.replica) - Number(b.header.replica))[0],
    );
    const missing = byShard.findIndex((m) => !m);
    if (missing >= 0) throw new Error(`no agent of stage ${s}${stage.tensorParallel > 1 ? ` shard ${missing}` : ''} survived`);
    const shards = byShard.map((m) => ({ tensors: m!.header.tensors as LocalTensor[], values: bytesToFloats(m!.payload) }));
    const tensors: Described[] = [];
    const wholes: Float32Array[] = [];
    const offsets = shards.map(() => 0);
    for (const [i, t] of shards[0].tensors.entries()) {
      const take = (k: number) => {
        const size = shards[k].tensors[i].shape.reduce((a, b) => a * b, 1);
        const values = shards[k].values.subarray(offsets[k], offsets[k] + size);
        offsets[k] += size;
        return values;
      };
      if (!t.split) {
        const values = take(0);
        for (let k = 1; k < shards.length; k++) take(k); // every shard holds a copy; keep shard 0's
        tensors.push({ name: t.name, slot: t.slot, shape: t.shape });
        wholes.push(values);
        continue;
      }
      const { axis, parts: count, fullShape } = t.split;
      const whole = new Float32Array(fullShape.reduce((a, b) => a * b, 1));
      for (let k = 0; k < count; k++) placeSlice(whole, take(k), fullShape, axis, count, k);
      tensors.push({ name: t.name, slot: t.slot, shape: fullShape });
      wholes.push(whole);
    }
    const values = new Float32Array(wholes.reduce((n, w) => n + w.length, 0));
    let at = 0;
    for (const w of wholes) {
      values.set(w, at);
      at += w.length;
    }
    parts.push({ tensors, values });
  });
  const { tensors, body } = concat(parts);
  return { tensors, body, optimizerStep: Number(replies[0]?.header.optimizerStep ?? 0) };
}

/** Cut a state into what each stage of `plan` needs (by layer ids), as restore messages carry it. */
export function stateForStages(state: JobState, plan: Plan): Array<{ tensors: CheckpointTensor[]; body: Float32Array }> {
  return plan.stages.map((stage) => {
    const layers = new Set(stage.layers);
    const own = state.tensors.filter((t) => layers.has(t.name.slice(0, t.name.lastIndexOf('/'))));
    const values = new Float32Array(own.reduce((n, t) => n + t.length, 0));
    let at = 0;
    const tensors = own.map((t) => {
      values.set(state.body.subarray(t.offset, t.offset + t.length), at);
      const moved = { ...t, offset: at };
      at += t.length;
      return moved;
    });
    return { tensors, body: values };
  });
}
