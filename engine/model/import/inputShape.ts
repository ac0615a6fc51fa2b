import type { Diagnostic } from '../../plan/diagnostics.js';
import { isObject, preview, read, type Json } from './configValues.js';

export const DEFAULT_UNKNOWN_DIM = 128;

/**
 * The declared input shape of an InputLayer, or of a Sequential model's first layer, with the batch
 * dimension dropped: Keras 2 and tfjs write `batch_input_shape`, Keras 3 `batch_shape`; older configs
 * `input_shape` (no batch) or Dense's `input_dim`. Undefined when none is declared.
 */
export function declaredInputShape(config: Json): unknown[] | undefined {
  const batched = read(config, 'batch_input_shape') ?? read(config, 'batch_shape');
  if (Array.isArray(batched)) return batched.slice(1);
  const shape = read(config, 'input_shape');
  if (Array.isArray(shape)) return shape;
  const dim = read(config, 'input_dim');
  return typeof dim === 'number' ? [dim] : undefined;
}

/**
 * Turns a declared shape into concrete dimensions. A `null` dimension (a variable sequence length or
 * image size) becomes `fill`, with a warning, since costs need sizes. Undefined when malformed.
 */
export function concreteShape(declared: unknown[], fill: number, layer: string, diagnostics: Diagnostic[]): number[] | undefined {
  if (!declared.every((d) => d === null || (typeof d === 'number' && Number.isInteger(d) && d > 0))) return undefined;
  if (declared.some((d) => d === null)) {
    diagnostics.push({
      severity: 'warning',
      code: 'unknown-dimension',
      message: `Input "${layer}" has shape [${declared.map((d) => d ?? 'null')}]; Shoal assumed ${fill} for each unknown dimension.`,
      where: { layer },
      hint: 'Pass the real size (importKerasModel options sequenceLength or inputShapes) so costs and memory are right.',
    });
  }
  return declared.map((d) => (d === null ? fill : (d as number)));
}

/** The input shape to use for `layer`: an override, else the declared one, else undefined (reported). */
export function inputShapeFor(
  layer: string,
  config: unknown,
  options: { sequenceLength?: number; inputShapes?: Record<string, number[]> },
  diagnostics: Diagnostic[],
): number[] | undefined {
  const override = options.inputShapes?.[layer];
  if (override) return [...override];
  const declared = isObject(config) ? declaredInputShape(config) : undefined;
  const shape = declared && concreteShape(declared, options.sequenceLength ?? DEFAULT_UNKNOWN_DIM, layer, diagnostics);
  const bad = declared?.find((d) => d !== null && !(typeof d === 'number' && Number.isInteger(d) && d > 0));
  if (!shape && bad !== undefined) {
    diagnostics.push({
      severity: 'error',
      code: 'missing-input-shape',
      message: `Input "${layer}" declares the shape ${preview(declared)} (batch left out), with the dimension ${preview(bad)}; every dimension must be a positive integer, or null for a variable size.`,
      where: { layer },
      hint: 'Fix the input\'s batch_input_shape (or batch_shape, input_shape) in the model file, or pass options.inputShapes.',
    });
  } else if (!shape) {
    diagnostics.push({
      severity: 'error',
      code: 'missing-input-shape',
      message: `Input "${layer}" declares no readable shape${declared ? ` (got ${preview(declared)})` : ''}; layers that depend on it are left out.`,
      where: { layer },
      hint: 'Give the input layer a batch_input_shape, or pass options.inputShapes.',
    });
  }
  return shape;
}
