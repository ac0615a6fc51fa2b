import type { ModelArray } from '../../data/modelArrays.js';
import { rowSizeOf } from './dataset.js';
import { classNamesOf, type ValueStats } from './valueStats.js';

/**
 * How one label (a column, a key, a class folder) becomes a model output's target row: a class id, a
 * one-hot row, or the number itself — decided by the model's loss (its target shape and range) and
 * the description's `labels`, and checked against every value the file holds before anything trains.
 */
export interface TargetEncoding {
  rowSize: number;
  /** Class names by index when the labels are names (sorted), else null. */
  classes: string[] | null;
  /** Write the target of one raw label value at out[at..at+rowSize). */
  write(value: string | number, out: Float32Array, at: number, where: () => string): void;
  note: string;
}

export function targetEncoding(target: ModelArray, stats: ValueStats, what: string, prefer: 'integer' | 'oneHot' | undefined, rowLabel: string): TargetEncoding {
  const rowSize = rowSizeOf(target.shape);
  const layer = `model output '${target.name}'`;
  const oneHot = prefer === 'oneHot' || (prefer === undefined && rowSize > 1);
  if (prefer === 'oneHot' && rowSize === 1) throw new Error(`${what}: preprocessing.labels is "oneHot", but ${layer} takes one value per sample (class ids). Use "labels": "integer" or a categorical loss.`);
  if (prefer === 'integer' && rowSize > 1) throw new Error(`${what}: preprocessing.labels is "integer", but ${layer} takes ${rowSize} values per sample (one-hot rows). Use "labels": "oneHot" or a sparse loss.`);
  if (stats.firstEmpty !== undefined) throw new Error(`${what} ${rowLabel} ${stats.firstEmpty}: the label is missing (${stats.empty} empty in all). Fill in or drop those rows.`);
  const classes = classNamesOf(stats);
  if (stats.tooManyDistinct && classes === null && stats.firstText) throw new Error(`${what}: more than 10000 distinct label names; a label column of names is for classes. Check --label-column.`);
  const classifying = oneHot || target.dtype === 'int32' || target.range !== undefined || classes !== null;
  const count = oneHot ? rowSize : target.range ? target.range[1] - target.range[0] + 1 : undefined;

  if (classes !== null) {
    if (!classifying) throw new Error(`${what}: labels are names (${preview(classes)}), but ${layer} is a regression target (loss ${target.dtype === 'float32' ? 'mse/mae' : target.dtype}). Use a classification loss (--loss sparse_categorical_crossentropy) or numeric labels.`);
    if (count !== undefined && classes.length > count) {
      throw new Error(`${what}: ${classes.length} classes (${preview(classes)}), but ${layer} has room for ${count}. Give the model's last layer ${classes.length} units or drop classes.`);
    }
    const index = new Map(classes.map((c, i) => [c, i]));
    return {
      rowSize, classes,
      note: `${classes.length} classes ${preview(classes)}${oneHot ? ' one-hot' : ''}`,
      write(value, out, at, where) {
        const i = index.get(typeof value === 'number' ? String(value) : value.trim());
        if (i === undefined) throw new Error(`${where()}: label "${value}" is not one of the ${classes.length} classes indexed (${preview(classes)}); the file changed since it was indexed? Run again to re-index.`);
        if (oneHot) { out.fill(0, at, at + rowSize); out[at + i] = 1; } else out[at] = i;
      },
    };
  }
  if (classifying) {
    if (stats.firstNonInteger) throw new Error(`${what} ${rowLabel} ${stats.firstNonInteger.row}: label ${stats.firstNonInteger.value} is not a class id (a whole number), but ${layer} takes classes. Use class ids 0..${(count ?? 2) - 1} or a regression loss (--loss mse).`);
    const lo = target.range && !oneHot ? target.range[0] : 0;
    const hi = count !== undefined ? lo + count - 1 : Infinity;
    if (stats.min < lo) throw new Error(`${what} ${rowLabel} ${stats.minRow}: label ${stats.min}, but ${layer} takes class ids ${lo}..${hi}.`);
    if (stats.max > hi) throw new Error(`${what} ${rowLabel} ${stats.maxRow}: label ${stats.max}, but ${layer} takes class ids ${lo}..${hi} (${count} classes). Check the number of classes or the loss.`);
  }
  return {
    rowSize, classes: null,
    note: oneHot ? `class ids one-hot over ${rowSize}` : classifying ? 'class ids' : 'numeric targets',
    write(value, out, at, where) {
      const v = typeof value === 'number' ? value : Number(value.trim());
      if (!Number.isFinite(v)) throw new Error(`${where()}: label "${value}" is not a number (the file changed since it was indexed?).`);
      if (oneHot) {
        if (!(v >= 0 && v < rowSize && Number.isInteger(v))) throw new Error(`${where()}: label ${v} is outside class ids 0..${rowSize - 1}.`);
        out.fill(0, at, at + rowSize); out[at + v] = 1;
      } else out[at] = v;
    },
  };
}

function preview(names: string[]): string {
  const shown = names.slice(0, 6).map((n) => `"${n}"`).join(', ');
  return names.length > 6 ? `${shown}, … ${names.length - 6} more` : shown;
}
