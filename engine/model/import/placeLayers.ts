import type { Diagnostic } from '../../plan/diagnostics.js';
import { LIMITS } from '../../plan/limits.js';
import type { GraphBuilder } from '../builder.js';
import { isObject } from './configValues.js';
import { importLayer, type LayerCall } from './importLayer.js';
import { DEFAULT_UNKNOWN_DIM, inputShapeFor } from './inputShape.js';
import type { LayerLibrary } from './layerLibrary.js';
import { MODEL_CLASSES, readKerasModel, type KerasModel, type TensorRef } from './kerasDocument.js';

export interface ImportContext {
  builder: GraphBuilder;
  options: { sequenceLength?: number; inputShapes?: Record<string, number[]> };
  /** tfjs-layers' classes, where the caller has tfjs: layers Shoal has no spec of its own for are built by it. */
  library?: LayerLibrary;
  diagnostics: Diagnostic[];
  /**
   * Layer calls placed so far, nested-model calls included. A 4 KB document of sub-models that call
   * each other twice expands exponentially, so expansion stops at LIMITS.layers, reported once.
   */
  placed: number;
  /** Set once the budget is spent: every placing loop stops. */
  exhausted?: boolean;
}

/**
 * Where a (possibly nested) model is placed: ids get `prefix`; a nested model called a second time
 * shares the first call's weights; a frozen one makes all its weights non-trainable. `bound` are the
 * graph ids feeding a nested model's inputs (absent at the top level, where inputs become nodes).
 */
export interface Scope {
  prefix: string;
  shared: boolean;
  frozen: boolean;
  bound?: string[];
  /** How many models enclose this one (0 at the top); capped at LIMITS.nestingDepth. */
  depth?: number;
}

/** Counts one call against the expansion budget; false (reported once) when it is spent. */
function spend(ctx: ImportContext, id: string): boolean {
  if (ctx.exhausted) return false;
  if (++ctx.placed <= LIMITS.layers) return true;
  ctx.exhausted = true;
  ctx.diagnostics.push({
    severity: 'error',
    code: 'model-too-large',
    message: `The model expands to more than ${LIMITS.layers} layers (nested models counted once per call); Shoal stopped reading it at "${id}".`,
    where: { layer: id },
    hint: `Use a model of at most ${LIMITS.layers} layers: a sub-model called many times is expanded each time.`,
  });
  return false;
}

/** Places one layer call; a nested model is inlined with its layers prefixed `<call id>/`. Returns output ids. */
function placeCall(ctx: ImportContext, scope: Scope, call: LayerCall): string[] {
  const { layer } = call;
  if (!spend(ctx, call.id)) return [];
  if (MODEL_CLASSES.has(layer.className) && isObject(layer.config) && Array.isArray(layer.config.layers)) {
    const depth = (scope.depth ?? 0) + 1;
    if (depth > LIMITS.nestingDepth) {
      ctx.diagnostics.push({ severity: 'error', code: 'model-too-deep', message: `Model "${call.id}" is nested ${depth} models deep; Shoal reads at most ${LIMITS.nestingDepth} levels, and skips it.`, where: { layer: call.id }, hint: 'Flatten the nested models (Keras: rebuild the model from the inner layers).' });
      return [];
    }
    const inner = readKerasModel(layer.className, layer.config, ctx.diagnostics);
    const frozen = call.frozen || layer.config.trainable === false;
    return placeModel(inner, ctx, { prefix: `${call.id}/`, shared: call.shared, frozen, bound: call.inputs, depth });
  }
  importLayer(ctx.builder, call, ctx.diagnostics, ctx.library);
  return [call.id];
}

export function placeModel(model: KerasModel, ctx: ImportContext, scope: Scope): string[] {
  return model.kind === 'sequential' ? placeSequential(model, ctx, scope) : placeFunctional(model, ctx, scope);
}

/** A chain: the first layer is an InputLayer or declares the input shape itself (tfjs names it `<first>_input`). */
function placeSequential(model: KerasModel, ctx: ImportContext, scope: Scope): string[] {
  const [first] = model.layers;
  if (!first) return scope.bound ?? [];
  const hasInputLayer = first.className === 'InputLayer';
  let previous = scope.bound?.[0];
  if (previous === undefined) {
    const inputId = scope.prefix + (hasInputLayer ? first.name : `${first.name}_input`);
    const shape = inputShapeFor(inputId, first.config, ctx.options, ctx.diagnostics);
    if (!shape) return [];
    previous = ctx.builder.add(inputId, { kind: 'input', shape });
  }
  for (const layer of hasInputLayer ? model.layers.slice(1) : model.layers) {
    const id = scope.prefix + layer.name;
    if (ctx.builder.has(id)) {
      ctx.diagnostics.push({ severity: 'error', code: 'malformed-model', message: `Two layers are named "${id}"; the second is skipped.`, where: { layer: id }, hint: 'Give every layer a unique name.' });
      continue;
    }
    const outputs = placeCall(ctx, scope, { layer, id, inputs: [previous], shared: scope.shared, frozen: scope.frozen });
    // A skipped nested model (too deep, over budget) ends the chain: nothing after it has an input.
    if (outputs[0] === undefined) return [];
    previous = outputs[0];
  }
  return [previous];
}

const refKey = (layer: string, node: number) => `${layer}#${node}`;

interface Entry {
  call: LayerCall;
  refs: TensorRef[];
  key: string;
}

/**
 * The order in which calls are placed: the order the former loop of repeated passes over the list
 * produced (each pass places, in list order, every call whose inputs are placed by then), computed in
 * linear time — passes cost O(n²) on a config listed backwards. A call placed in pass p at list index i
 * needs each input placed before (p, i): in pass p at a smaller index, or in an earlier pass. Calls
 * whose inputs never come (missing, circular) are left out; the caller reports them.
 */
function placementOrder(entries: Entry[], available: Set<string>): Entry[] {
  const byKey = new Map<string, number>();
  entries.forEach((e, i) => byKey.set(e.key, i));
  const pass = new Array<number>(entries.length).fill(0);
  const missing = entries.map((e) => new Set(e.refs.map((r) => refKey(r.layer, r.node)).filter((k) => !available.has(k))));
  const dependents = new Map<number, number[]>();
  const ready: number[] = [];
  missing.forEach((keys, i) => {
    for (const k of keys) {
      const producer = byKey.get(k);
      if (producer === undefined) continue;
      const list = dependents.get(producer);
      if (list) list.push(i);
      else dependents.set(producer, [i]);
    }
    if (keys.size === 0) {
      pass[i] = 1;
      ready.push(i);
    }
  });
  const left = missing.map((keys) => keys.size);
  for (let q = 0; q < ready.length; q++) {
    const d = ready[q];
    for (const i of dependents.get(d) ?? []) {
      pass[i] = Math.max(pass[i], d < i ? pass[d] : pass[d] + 1);
      if (--left[i] === 0) ready.push(i);
    }
  }
  for (const i of ready) if (pass[i] === 0) pass[i] = 1;
  return ready.sort((a, b) => pass[a] - pass[b] || a - b).map((i) => entries[i]);
}

/**
 * A DAG: each call of each layer becomes a node (later calls of a shared layer get `name@k` ids and no
 * parameters of their own). Calls are placed once their inputs are, whatever order the config lists.
 */
function placeFunctional(model: KerasModel, ctx: ImportContext, scope: Scope): string[] {
  const { builder, diagnostics } = ctx;
  /** Graph ids of each placed call's outputs, by tensor index. */
  const placed = new Map<string, string[]>();
  const hints = shapeHints(model, ctx.options.sequenceLength ?? DEFAULT_UNKNOWN_DIM);
  const idOf = (r: TensorRef) => placed.get(refKey(r.layer, r.node))?.[r.tensor] ?? placed.get(refKey(r.layer, r.node))?.[0];
  const entries: Entry[] = [];
  for (const layer of model.layers) {
    if (layer.className === 'InputLayer') {
      placeInput(ctx, scope, model, layer.name, layer.config, placed);
      continue;
    }
    layer.calls.forEach((refs, k) => {
      const id = scope.prefix + (k === 0 ? layer.name : `${layer.name}@${k}`);
      const call: LayerCall = { layer, id, inputs: [], shared: scope.shared || k > 0, frozen: scope.frozen, shapeHint: hints.get(refKey(layer.name, k)) };
      entries.push({ call, refs, key: refKey(layer.name, k) });
    });
  }
  const done = new Set<Entry>();
  for (const entry of placementOrder(entries, new Set(placed.keys()))) {
    const { call, refs, key } = entry;
    const inputs = refs.map(idOf);
    if (ctx.exhausted || inputs.some((i) => i === undefined) || builder.has(call.id)) continue;
    placed.set(key, placeCall(ctx, scope, { ...call, inputs: inputs as string[] }));
    done.add(entry);
  }
  const pending = entries.filter((e) => !done.has(e));
  if (pending.length > 0 && !ctx.exhausted) {
    const names = pending.map((p) => p.call.id);
    diagnostics.push({
      severity: 'error',
      code: 'unresolved-input',
      message: `${names.length} layer call(s) could not be placed because an input is missing, circular or a duplicate name: ${names.slice(0, 10).join(', ')}${names.length > 10 ? ', …' : ''}.`,
      where: { layer: names[0] },
      hint: 'Check inbound_nodes, layer names and the input layers of the model config.',
    });
  }
  warnAboutExtraOutputs(model, placed, diagnostics);
  return model.outputs.flatMap((r) => {
    const id = idOf(r);
    if (id) return [id];
    diagnostics.push({ severity: 'error', code: 'unresolved-output', message: `Model output "${r.layer}" is not a placed layer.`, where: { layer: scope.prefix + r.layer }, hint: 'Check output_layers in the model config.' });
    return [];
  });
}

/** An input layer: a new input node at the top level, the caller's tensor inside a nested model. */
function placeInput(ctx: ImportContext, scope: Scope, model: KerasModel, name: string, config: unknown, placed: Map<string, string[]>): void {
  if (scope.bound) {
    const position = model.inputs.findIndex((r) => r.layer === name);
    const bound = scope.bound[position];
    if (bound !== undefined) placed.set(refKey(name, 0), [bound]);
    else ctx.diagnostics.push({ severity: 'error', code: 'unresolved-input', message: `Nested model input "${scope.prefix}${name}" is not fed by its caller.`, where: { layer: scope.prefix + name }, hint: 'Check the nested model\'s input_layers and the call feeding it.' });
    return;
  }
  const id = scope.prefix + name;
  const shape = inputShapeFor(id, config, ctx.options, ctx.diagnostics);
  if (shape && !ctx.builder.has(id)) placed.set(refKey(name, 0), [ctx.builder.add(id, { kind: 'input', shape })]);
}

/** Layers whose second or later output is used: Shoal models one output per layer (a nested model's excepted). */
function warnAboutExtraOutputs(model: KerasModel, placed: Map<string, string[]>, diagnostics: Diagnostic[]): void {
  const named = new Set<string>();
  for (const layer of model.layers) {
    for (const call of layer.calls) for (const r of call) if (r.tensor >= (placed.get(refKey(r.layer, r.node))?.length ?? 1)) named.add(r.layer);
  }
  for (const r of model.outputs) if (r.tensor >= (placed.get(refKey(r.layer, r.node))?.length ?? 1)) named.add(r.layer);
  for (const name of named) {
    diagnostics.push({ severity: 'warning', code: 'multi-output-layer', message: `Layer "${name}" has several outputs; Shoal models only its first, and gives the others its shape.`, where: { layer: name }, hint: 'Shapes after that layer may be off; check them in the graph.' });
  }
}

/** Output shapes Keras 3 records on tensors (batch dropped, unknowns filled), by producing call. */
function shapeHints(model: KerasModel, fill: number): Map<string, number[]> {
  const hints = new Map<string, number[]>();
  const note = (r: TensorRef) => {
    if (r.shape && r.tensor === 0) hints.set(refKey(r.layer, r.node), r.shape.slice(1).map((d) => d ?? fill));
  };
  for (const layer of model.layers) for (const call of layer.calls) call.forEach(note);
  return hints;
}
