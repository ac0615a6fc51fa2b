import type { Diagnostic } from '../../plan/diagnostics.js';
import type { GraphBuilder } from '../builder.js';
import { isObject } from './configValues.js';
import { importLayer, type LayerCall } from './importLayer.js';
import { DEFAULT_UNKNOWN_DIM, inputShapeFor } from './inputShape.js';
import { MODEL_CLASSES, readKerasModel, type KerasModel, type TensorRef } from './kerasDocument.js';

export interface ImportContext {
  builder: GraphBuilder;
  options: { sequenceLength?: number; inputShapes?: Record<string, number[]> };
  diagnostics: Diagnostic[];
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
}

/** Places one layer call; a nested model is inlined with its layers prefixed `<call id>/`. Returns output ids. */
function placeCall(ctx: ImportContext, scope: Scope, call: LayerCall): string[] {
  const { layer } = call;
  if (MODEL_CLASSES.has(layer.className) && isObject(layer.config) && Array.isArray(layer.config.layers)) {
    const inner = readKerasModel(layer.className, layer.config, ctx.diagnostics);
    const frozen = call.frozen || layer.config.trainable === false;
    return placeModel(inner, ctx, { prefix: `${call.id}/`, shared: call.shared, frozen, bound: call.inputs });
  }
  importLayer(ctx.builder, call, ctx.diagnostics);
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
    [previous] = placeCall(ctx, scope, { layer, id, inputs: [previous], shared: scope.shared, frozen: scope.frozen });
  }
  return [previous];
}

const refKey = (layer: string, node: number) => `${layer}#${node}`;

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
  let pending: { call: LayerCall; refs: TensorRef[]; key: string }[] = [];
  for (const layer of model.layers) {
    if (layer.className === 'InputLayer') {
      placeInput(ctx, scope, model, layer.name, layer.config, placed);
      continue;
    }
    layer.calls.forEach((refs, k) => {
      const id = scope.prefix + (k === 0 ? layer.name : `${layer.name}@${k}`);
      const call: LayerCall = { layer, id, inputs: [], shared: scope.shared || k > 0, frozen: scope.frozen, shapeHint: hints.get(refKey(layer.name, k)) };
      pending.push({ call, refs, key: refKey(layer.name, k) });
    });
  }
  // Repeated passes place each call after its inputs; a pass that places nothing ends the loop.
  for (let progress = true; pending.length > 0 && progress; ) {
    const waiting = pending.filter(({ call, refs, key }) => {
      const inputs = refs.map(idOf);
      if (inputs.some((i) => i === undefined) || builder.has(call.id)) return true;
      placed.set(key, placeCall(ctx, scope, { ...call, inputs: inputs as string[] }));
      return false;
    });
    progress = waiting.length < pending.length;
    pending = waiting;
  }
  if (pending.length > 0) {
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
