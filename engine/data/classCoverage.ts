import type { ModelArray, ModelArrays } from './modelArrays.js';

/** How many classes a target takes: one-hot rows' width, else its class-id range; undefined for a regression target. */
function classCount(target: ModelArray): number | undefined {
  const width = target.shape.reduce((a, b) => a * b, 1);
  if (width > 1) return width;
  return target.range ? target.range[1] - target.range[0] + 1 : undefined;
}

/**
 * Classes the model has that the data lacks, for outputs whose labels are class names (image class
 * folders, a table's names): one class is refused (a classifier learns nothing from it), fewer than
 * the model's are warned of, with both counts. `what` names the data in the messages.
 */
export function classCoverage(arrays: ModelArrays, classes: Record<string, string[]> | undefined, what: string): string[] {
  const warnings: string[] = [];
  for (const target of arrays.targets) {
    const names = classes?.[target.name];
    const count = classCount(target);
    if (!names || count === undefined || names.length >= count) continue;
    const shown = names.slice(0, 6).map((n) => `"${n}"`).join(', ') + (names.length > 6 ? `, … ${names.length - 6} more` : '');
    if (names.length < 2) {
      throw new Error(`${what}: one class (${shown}) for model output '${target.name}', which has ${count}: a classifier learns nothing from one class. Add the data of the other ${count - 1}, or give the model as many classes as the data has.`);
    }
    warnings.push(`warning: ${what} has ${names.length} classes (${shown}), model output '${target.name}' has ${count}: the other ${count - names.length} never appear in training (class ids ${names.length}..${count - 1}).`);
  }
  return warnings;
}
