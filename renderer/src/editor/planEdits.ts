import type { ModelGraph } from '../../../engine/model/graph';
import type { Plan, Stage } from '../../../engine/plan/plan';
import type { WeightSbp } from '../../../engine/plan/sbp';

/**
 * The stage editor's edits, as pure functions from a plan to a new plan. An edit that would break the
 * graph order of the stages is refused with a sentence saying why, never turned into an invalid plan.
 */
export type EditResult = { plan: Plan; note?: string } | { refused: string };

const quote = (ids: string[]) => (ids.length === 1 ? `"${ids[0]}"` : `"${ids[0]}" … "${ids[ids.length - 1]}"`);

export function stageOfLayer(plan: Plan, id: string): number {
  return plan.stages.findIndex((s) => s.layers.includes(id));
}

/** New stages; when the rank layout changes, explicit device groups fall back to rank order. */
function withStages(plan: Plan, stages: Stage[], ranksChanged: boolean, note?: string): EditResult {
  const hadDevices = plan.stages.some((s) => s.devices);
  if (!ranksChanged || !hadDevices) return { plan: { ...plan, stages }, note };
  const cleared = stages.map(({ devices: _devices, ...rest }) => rest);
  return { plan: { ...plan, stages: cleared }, note: [note, 'Device groups were reset to rank order.'].filter(Boolean).join(' ') };
}

/** The selection as one run of one stage: its stage and first/last positions in that stage. */
export function selectionRun(plan: Plan, ids: string[]): { stage: number; first: number; last: number } | { refused: string } {
  if (ids.length === 0) return { refused: 'Select a layer first.' };
  const stage = stageOfLayer(plan, ids[0]);
  if (stage < 0) return { refused: `Layer "${ids[0]}" is in no stage.` };
  const layers = plan.stages[stage].layers;
  const positions = ids.map((id) => layers.indexOf(id));
  if (positions.some((p) => p < 0)) return { refused: 'The selection spans several stages: select layers of one stage to move them together.' };
  const first = Math.min(...positions);
  const last = Math.max(...positions);
  if (last - first + 1 !== ids.length) return { refused: 'Select a contiguous run of layers (shift-click the last one) to move them together.' };
  return { stage, first, last };
}

/** Move the selected layers to stage `to`: only the tail of a stage to the next, or its head to the previous. */
export function moveLayers(plan: Plan, ids: string[], to: number): EditResult {
  const run = selectionRun(plan, ids);
  if ('refused' in run) return run;
  const { stage: from, first, last } = run;
  const layers = plan.stages[from].layers;
  const picked = layers.slice(first, last + 1);
  if (to === from) return { refused: `${quote(picked)} ${picked.length > 1 ? 'are' : 'is'} already in stage ${from}.` };
  if (to < 0 || to >= plan.stages.length) return { refused: `There is no stage ${to}.` };
  if (Math.abs(to - from) !== 1) {
    return { refused: `Stage ${to} is not next to stage ${from}: layers move one stage at a time, so that the stages keep following the graph order.` };
  }
  if (to === from + 1 && last !== layers.length - 1) {
    return { refused: `Only the last layers of stage ${from} can move to stage ${to}: "${layers[last + 1]}" comes after ${quote(picked)}. Shift-click "${layers[layers.length - 1]}" to move the whole tail.` };
  }
  if (to === from - 1 && first !== 0) {
    return { refused: `Only the first layers of stage ${from} can move to stage ${to}: "${layers[first - 1]}" comes before ${quote(picked)}. Shift-click "${layers[0]}" to move the whole head.` };
  }
  const rest = [...layers.slice(0, first), ...layers.slice(last + 1)];
  const stages = plan.stages.map((s, i) => {
    if (i === from) return { ...s, layers: rest };
    if (i === to) return { ...s, layers: to > from ? [...picked, ...s.layers] : [...s.layers, ...picked] };
    return s;
  });
  if (rest.length > 0) return withStages(plan, stages, false);
  return withStages(plan, stages.filter((_, i) => i !== from), true, `Stage ${from} became empty and was removed.`);
}

/** Start a new stage at layer `id`, with the same degrees as the stage it is cut from. */
export function splitStageAt(plan: Plan, id: string): EditResult {
  const s = stageOfLayer(plan, id);
  if (s < 0) return { refused: `Layer "${id}" is in no stage.` };
  const stage = plan.stages[s];
  const at = stage.layers.indexOf(id);
  if (at === 0) return { refused: `"${id}" already starts stage ${s}: select a later layer to split before it.` };
  const head: Stage = { ...stage, layers: stage.layers.slice(0, at) };
  const tail: Stage = { ...stage, layers: stage.layers.slice(at), devices: undefined };
  return withStages(plan, [...plan.stages.slice(0, s), head, tail, ...plan.stages.slice(s + 1)], true, `Split stage ${s} before "${id}".`);
}

/** Join stage `s` and the stage after it; the merged stage keeps stage `s`'s degrees. */
export function mergeWithNext(plan: Plan, s: number): EditResult {
  if (s < 0 || s >= plan.stages.length - 1) return { refused: `Stage ${s} is the last stage: there is no next stage to merge it with.` };
  const merged: Stage = { ...plan.stages[s], layers: [...plan.stages[s].layers, ...plan.stages[s + 1].layers] };
  return withStages(plan, [...plan.stages.slice(0, s), merged, ...plan.stages.slice(s + 2)], true, `Merged stages ${s} and ${s + 1}.`);
}

export type StageDegree = 'dataParallel' | 'tensorParallel';

/** Set a stage's data- or tensor-parallel degree (per-replica virtual-node counts no longer apply). */
export function setStageDegree(plan: Plan, s: number, field: StageDegree, value: number): EditResult {
  if (!Number.isInteger(value) || value < 1) return { refused: `A ${field === 'dataParallel' ? 'data' : 'tensor'}-parallel degree is a whole number of at least 1.` };
  if (plan.stages[s][field] === value) return { plan };
  const stages = plan.stages.map((stage, i) => (i === s ? { ...stage, [field]: value } : stage));
  const virtualNodes = field === 'dataParallel' && plan.virtualNodes?.perReplica ? { total: plan.virtualNodes.total } : plan.virtualNodes;
  return withStages({ ...plan, virtualNodes }, stages, true);
}

/** Set a layer's weight layout; 'B' (replicated) removes the entry, as plans leave replicated layers out. */
export function setSharding(plan: Plan, id: string, weight: WeightSbp): EditResult {
  const sharding = { ...plan.sharding };
  if (weight === 'B') delete sharding[id];
  else sharding[id] = { weight };
  return { plan: { ...plan, sharding } };
}

export type PlanFields = Partial<Pick<Plan, 'microBatches' | 'schedule' | 'zero' | 'recompute' | 'globalBatch'>>;

export function setPlanFields(plan: Plan, fields: PlanFields): EditResult {
  return { plan: { ...plan, ...fields } };
}

/** Virtual nodes per step; `undefined` goes back to one per data-parallel replica. */
export function setVirtualNodes(plan: Plan, total: number | undefined): EditResult {
  if (total === undefined) {
    const { virtualNodes: _vn, ...rest } = plan;
    return { plan: rest };
  }
  return { plan: { ...plan, virtualNodes: { total } } };
}

/** Layer ids from `a` to `b` in graph order (inclusive), for shift-click ranges. */
export function layerRange(model: ModelGraph, a: string, b: string): string[] {
  const ids = model.layers.map((l) => l.id);
  const [i, j] = [ids.indexOf(a), ids.indexOf(b)];
  if (i < 0 || j < 0) return [b];
  return ids.slice(Math.min(i, j), Math.max(i, j) + 1);
}
