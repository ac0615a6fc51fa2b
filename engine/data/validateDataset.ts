import { Findings, type Diagnostic } from '../plan/diagnostics.js';
import { DatasetDescriptionSchema, formatOfFileName, type DatasetDescription, type DatasetFeed } from './datasetDescription.js';

/** What a description's feeds may name, per format. */
const FEED_FIELD: Record<DatasetDescription['format'], keyof DatasetFeed | null> = {
  csv: 'columns', tsv: 'columns', jsonl: 'key', npz: 'array', npy: null, images: null,
};

/**
 * Judge a dataset description (a parsed dataset.json, or what the CLI options make) on its own, before
 * any file is opened: the schema, then rules between fields. Returns the description when there are no
 * errors, and every finding (errors and warnings) with a code, the field and a fix — as plans are judged.
 * Whether the data fits a model is the readers' check, which needs the files.
 */
export function validateDatasetDescription(raw: unknown): { description?: DatasetDescription; diagnostics: Diagnostic[] } {
  const findings = new Findings();
  const parsed = DatasetDescriptionSchema.safeParse(raw);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      const field = issue.path.join('.') || '(top level)';
      findings.error('dataset-schema', `${field}: ${issue.message}.`, { field }, schemaHint(field));
    }
    return { diagnostics: findings.list };
  }
  const d = parsed.data;
  checkFeeds(d, 'inputs', findings);
  checkFeeds(d, 'outputs', findings);
  checkColumnsOnce(d, findings);
  checkPreprocessing(d, findings);
  const implied = formatOfFileName(d.source);
  if (implied && implied !== d.format && !(implied === 'tsv' && d.format === 'csv') && !(implied === 'csv' && d.format === 'tsv')) {
    findings.warning('dataset-source-format', `source "${d.source}" looks like ${implied} by its name, but format is ${d.format}.`, { field: 'format' }, `Set format to "${implied}" or check the source path.`);
  }
  return { description: findings.list.some((f) => f.severity === 'error') ? undefined : d, diagnostics: findings.list };
}

function schemaHint(field: string): string {
  if (field.startsWith('format')) return 'Use one of npy, npz, csv, tsv, images, jsonl.';
  if (field.startsWith('source')) return 'Give the data file or folder, absolute or relative to the dataset.json.';
  if (field.startsWith('validationSplit')) return 'Use a fraction between 0 and 1, e.g. 0.2.';
  if (field.startsWith('preprocessing')) return 'See the README\'s "Your data" section for the preprocessing fields.';
  return 'Compare with the README\'s "Your data" examples; unknown fields are refused so typos do not pass silently.';
}

function checkFeeds(d: DatasetDescription, side: 'inputs' | 'outputs', findings: Findings): void {
  const feeds = d[side];
  if (!feeds) return;
  const allowed = FEED_FIELD[d.format];
  const layers = new Set<string>();
  feeds.forEach((feed, i) => {
    const field = `${side}.${i}`;
    const given = (['columns', 'key', 'array'] as const).filter((k) => feed[k] !== undefined);
    if (allowed === null) {
      findings.error('dataset-feed-format', `${d.format} data is matched to the model by ${d.format === 'images' ? 'its class folders' : 'file names'}; ${side} cannot name ${given.join(', ') || 'a layer'}.`, { field },
        d.format === 'images' ? `Remove "${side}": each image feeds the model's one input and its folder gives the label.` : `Remove "${side}" and name the files x.npy / y.npy or <layer>.npy.`);
      return;
    }
    if (given.length !== 1 || given[0] !== allowed) {
      findings.error('dataset-feed-field', `${field} gives ${given.length ? given.join(' and ') : 'nothing'}; a ${d.format} feed names its data with "${allowed}" only.`, { field }, `Write { "layer": "...", "${allowed}": ${allowed === 'columns' ? '["a", "b"]' : '"name"'} }.`);
    }
    if (feeds.length > 1 && feed.layer === undefined) {
      findings.error('dataset-feed-layer', `${field} has no "layer", but ${side} has ${feeds.length} entries.`, { field: `${field}.layer` }, `Name the model ${side === 'inputs' ? 'input' : 'output'} layer each entry feeds.`);
    }
    if (feed.layer !== undefined) {
      if (layers.has(feed.layer)) findings.error('dataset-feed-layer', `${side} names layer "${feed.layer}" twice.`, { field: `${field}.layer` }, 'Give each model layer one entry (list several columns in one entry).');
      layers.add(feed.layer);
    }
  });
}

function checkColumnsOnce(d: DatasetDescription, findings: Findings): void {
  const inputs = new Set((d.inputs ?? []).flatMap((f) => f.columns ?? []));
  for (const [i, feed] of (d.outputs ?? []).entries()) {
    for (const c of feed.columns ?? []) {
      if (inputs.has(c)) findings.error('dataset-column-twice', `Column "${c}" is both a feature and a label.`, { field: `outputs.${i}.columns` }, 'A label column must not also feed the model; remove it from inputs.');
    }
  }
}

function checkPreprocessing(d: DatasetDescription, findings: Findings): void {
  const p = d.preprocessing;
  if (!p) return;
  if (p.normalize) {
    const { mean, std } = p.normalize;
    const stds = Array.isArray(std) ? std : [std];
    if (stds.some((s) => !(s > 0))) findings.error('dataset-normalize-std', `preprocessing.normalize.std holds ${stds.find((s) => !(s > 0))}; every std must be > 0.`, { field: 'preprocessing.normalize.std' }, 'Use the training set\'s standard deviation per feature (1 for a constant feature).');
    if (Array.isArray(mean) && Array.isArray(std) && mean.length !== std.length) {
      findings.error('dataset-normalize-length', `preprocessing.normalize has ${mean.length} means but ${std.length} stds.`, { field: 'preprocessing.normalize' }, 'Give one mean and one std per feature, or one number each for all features.');
    }
    if (d.format === 'images' || d.format === 'jsonl') findings.warning('dataset-normalize-format', `preprocessing.normalize applies to numeric features; ${d.format} data ${d.format === 'jsonl' ? 'holds token ids, which are never normalized' : 'is normalized per channel after scaling'}.`, { field: 'preprocessing.normalize' }, d.format === 'jsonl' ? 'Remove normalize.' : 'Give one mean and std per channel.');
  }
  const unused = (what: keyof typeof p, format: string) => {
    if (p[what] !== undefined && d.format !== format) findings.warning('dataset-preprocessing-unused', `preprocessing.${what} applies to ${format} data only; this dataset is ${d.format}.`, { field: `preprocessing.${what}` }, `Remove preprocessing.${what}.`);
  };
  unused('pixels', 'images');
  unused('imageSize', 'images');
  unused('padding', 'jsonl');
  unused('truncating', 'jsonl');
  unused('padValue', 'jsonl');
}

/** The description, or an Error listing every error finding (for the command line). */
export function parseDatasetDescription(raw: unknown, where: string): DatasetDescription {
  const { description, diagnostics } = validateDatasetDescription(raw);
  if (description) return description;
  const lines = diagnostics.filter((d) => d.severity === 'error').map((d) => `  ${d.code} (${d.where.field}): ${d.message} Fix: ${d.hint}`);
  throw new Error(`${where} is not a valid dataset description:\n${lines.join('\n')}`);
}
