import { z } from 'zod';

/**
 * What an evaluation of the validation set reports. Agents return additive sums (so that replicas,
 * shards and chunks add up); the coordinator divides them once and names the classes.
 */

/** Classes beyond this many are not drawn as a full matrix (per-class accuracy is still given). */
export const CONFUSION_MATRIX_MAX_CLASSES = 100;
/** Beyond this many classes (a language model's vocabulary) no class counts are kept at all: they would outweigh the result. */
export const PER_CLASS_MAX_CLASSES = 10_000;

/** One metric's share of the validation set: its value is `sum / count`. */
export const MetricSumSchema = z.object({ sum: z.number(), count: z.number() });

/**
 * One classifier output's counts: by true class, how many there were and how many were predicted
 * right; and the full matrix (row = true class, column = predicted, flattened row-major) when the
 * output has at most CONFUSION_MATRIX_MAX_CLASSES classes, else null.
 */
export const ConfusionSumsSchema = z.object({
  output: z.string(),
  classes: z.number().int().min(2),
  perClassTotal: z.array(z.number()),
  perClassCorrect: z.array(z.number()),
  matrix: z.array(z.number()).nullable(),
});
export type ConfusionSums = z.infer<typeof ConfusionSumsSchema>;

/** The confusion of a classifier output over the validation set, as events and run records carry it. */
export const ConfusionSchema = z.object({
  output: z.string(),
  /** Class names by class id: the dataset's names where it has them, else the ids. */
  classNames: z.array(z.string()),
  /** Counts, row = true class, column = predicted class; null beyond CONFUSION_MATRIX_MAX_CLASSES classes. */
  matrix: z.array(z.array(z.number())).nullable(),
  /** Share of each true class predicted right; null for a class with no validation sample. */
  perClassAccuracy: z.array(z.number().nullable()),
  /** Samples (or positions of a sequence output) counted: the matrix's sum. */
  total: z.number(),
  /** Why the matrix is absent, when it is. */
  note: z.string().optional(),
});
export type Confusion = z.infer<typeof ConfusionSchema>;

/** The fields eval and final events and run records share. */
export const validationFields = {
  validationLoss: z.number(),
  /** Absent for a regression loss (no accuracy metric). */
  validationAccuracy: z.number().optional(),
  /** The model's metrics by name (Keras's names; `<output>_<name>` for a model of several outputs, with `<output>_loss`). */
  metrics: z.record(z.string(), z.number()).optional(),
  /** First classifier output's confusion; in the last evaluation and the final event. */
  confusion: ConfusionSchema.optional(),
};
export const ValidationResultSchema = z.object(validationFields);
export type ValidationResult = z.infer<typeof ValidationResultSchema>;

/** The parts of evaluation sums that merge by name or by class (an agent's chunks, the agents of a job). */
export interface MergeableSums {
  metrics?: Record<string, { sum: number; count: number }>;
  confusion?: ConfusionSums;
}

/** Add `more`'s metric sums and class counts into `into` (class counts of a different output or class count are not mixed). */
export function addMergeableSums(into: MergeableSums, more: MergeableSums): void {
  for (const [name, m] of Object.entries(more.metrics ?? {})) {
    const have = (into.metrics ??= {})[name];
    into.metrics[name] = have ? { sum: have.sum + m.sum, count: have.count + m.count } : { ...m };
  }
  const c = more.confusion;
  if (!c) return;
  if (!into.confusion) {
    into.confusion = { ...c, perClassTotal: [...c.perClassTotal], perClassCorrect: [...c.perClassCorrect], matrix: c.matrix && [...c.matrix] };
    return;
  }
  const target = into.confusion;
  if (target.output !== c.output || target.classes !== c.classes) return;
  c.perClassTotal.forEach((v, i) => (target.perClassTotal[i] += v));
  c.perClassCorrect.forEach((v, i) => (target.perClassCorrect[i] += v));
  if (target.matrix && c.matrix) c.matrix.forEach((v, i) => (target.matrix![i] += v));
}

/** The confusion as reported: named classes, the matrix as rows, per-class accuracy. */
export function confusionOf(sums: ConfusionSums, names: string[] | undefined): Confusion {
  const { classes, matrix } = sums;
  const classNames = names && names.length === classes ? names : Array.from({ length: classes }, (_, i) => String(i));
  const rows = matrix && Array.from({ length: classes }, (_, t) => matrix.slice(t * classes, (t + 1) * classes));
  return {
    output: sums.output,
    classNames,
    matrix: rows,
    perClassAccuracy: sums.perClassTotal.map((n, i) => (n > 0 ? sums.perClassCorrect[i] / n : null)),
    total: sums.perClassTotal.reduce((a, b) => a + b, 0),
    ...(rows ? {} : { note: `${classes} classes: the matrix is kept for at most ${CONFUSION_MATRIX_MAX_CLASSES}; per-class accuracy is given for all.` }),
  };
}
