/**
 * What the agents minimise: one loss per model output, read the way Keras defines it. The loss comes
 * from the `--loss` option, else from the model file's training config (tfjs `training_config` /
 * `trainingConfig`, Keras 3 `compile_config`), else it is inferred from the output's shape and head.
 * Pure TypeScript: the agents and the studio both use it.
 */
import type { LayerNode, ModelGraph } from './graph.js';
import { isObject, read, type Json } from './import/configValues.js';

export type LossName = 'categoricalCrossentropy' | 'sparseCategoricalCrossentropy' | 'binaryCrossentropy' | 'meanSquaredError' | 'meanAbsoluteError';

export type AccuracyMetric = 'categoricalAccuracy' | 'sparseCategoricalAccuracy' | 'binaryAccuracy';

export interface OutputLoss {
  /** Graph id of the output layer. */
  output: string;
  loss: LossName;
  /** True: the output is logits (no softmax / sigmoid in the head); false: probabilities. */
  fromLogits: boolean;
  /** Loss weight: the total loss is the weighted sum over outputs (Keras `loss_weights`). */
  weight: number;
  /** The accuracy kind that fits the loss; null for regression losses. */
  metric: AccuracyMetric | null;
}

export interface TrainingSpec {
  outputs: OutputLoss[];
}

/** A training spec with the reasons for its choices, for the user. */
export interface TrainingSpecResult extends TrainingSpec {
  notes: string[];
}

export const LOSS_NAMES: readonly LossName[] = ['categoricalCrossentropy', 'sparseCategoricalCrossentropy', 'binaryCrossentropy', 'meanSquaredError', 'meanAbsoluteError'];

/** Spellings folded to lower case without separators: Keras snake_case, tfjs camelCase, class names. */
const SPELLINGS: Record<string, LossName> = {
  categoricalcrossentropy: 'categoricalCrossentropy',
  sparsecategoricalcrossentropy: 'sparseCategoricalCrossentropy',
  binarycrossentropy: 'binaryCrossentropy',
  meansquarederror: 'meanSquaredError',
  mse: 'meanSquaredError',
  meanabsoluteerror: 'meanAbsoluteError',
  mae: 'meanAbsoluteError',
};

const ACCEPTED =
  "categorical_crossentropy / categoricalCrossentropy / CategoricalCrossentropy, sparse_categorical_crossentropy, binary_crossentropy, mean_squared_error / mse, mean_absolute_error / mae";

export function normalizeLossName(name: string): LossName {
  // 'keras.losses.mse' and 'losses.MeanSquaredError' name the same losses.
  const folded = name.trim().split('.').pop()!.replace(/[_\-\s]/g, '').toLowerCase();
  const loss = SPELLINGS[folded];
  if (!loss) throw new Error(`Unknown loss "${name}". Shoal trains with: ${ACCEPTED}.`);
  return loss;
}

export interface ParsedLoss {
  loss: LossName;
  /** Present when the loss config says it (Keras loss objects' `from_logits`). */
  fromLogits?: boolean;
  /** Config options Shoal does not implement (label smoothing, ...), for the notes. */
  ignored: string[];
}

/**
 * A Keras loss object: `{ class_name: 'SparseCategoricalCrossentropy', config: { from_logits: true } }`
 * (Keras 2 training_config and Keras 3 compile_config), or Keras 3's serialised function
 * `{ class_name: 'function', config: 'sparse_categorical_crossentropy' }`.
 */
export function lossFromKerasObject(value: unknown): ParsedLoss {
  if (!isObject(value) || typeof value.class_name !== 'string') {
    throw new Error(`A loss should be a name or a Keras loss object { class_name, config }, got ${JSON.stringify(value)}.`);
  }
  const config = value.config;
  if (value.class_name === 'function' || value.class_name === 'Function') {
    const name = typeof config === 'string' ? config : value.registered_name;
    if (typeof name !== 'string') throw new Error(`A Keras loss function without a name: ${JSON.stringify(value)}.`);
    return { loss: normalizeLossName(name), ignored: [] };
  }
  const parsed: ParsedLoss = { loss: normalizeLossName(value.class_name), ignored: [] };
  if (isObject(config)) {
    const fromLogits = read(config, 'from_logits');
    if (typeof fromLogits === 'boolean') parsed.fromLogits = fromLogits;
    const smoothing = read(config, 'label_smoothing');
    if (typeof smoothing === 'number' && smoothing !== 0) parsed.ignored.push(`label_smoothing ${smoothing}`);
    const ignoreClass = read(config, 'ignore_class');
    if (ignoreClass !== undefined) parsed.ignored.push(`ignore_class ${JSON.stringify(ignoreClass)}`);
  }
  return parsed;
}

/** A loss given as a name or a Keras loss object. */
export function parseLoss(value: unknown): ParsedLoss {
  return typeof value === 'string' ? { loss: normalizeLossName(value), ignored: [] } : lossFromKerasObject(value);
}

export function metricFor(loss: LossName): AccuracyMetric | null {
  if (loss === 'categoricalCrossentropy') return 'categoricalAccuracy';
  if (loss === 'sparseCategoricalCrossentropy') return 'sparseCategoricalAccuracy';
  if (loss === 'binaryCrossentropy') return 'binaryAccuracy';
  return null;
}

/** The training config in a model document: tfjs model.json, a bare topology, or Keras 3 config.json. */
export function trainingConfigOf(doc: unknown): Json | undefined {
  if (typeof doc === 'string') {
    try {
      doc = JSON.parse(doc) as unknown;
    } catch {
      return undefined;
    }
  }
  if (!isObject(doc)) return undefined;
  const places = [doc, isObject(doc.modelTopology) ? doc.modelTopology : undefined];
  for (const place of places) {
    if (!place) continue;
    for (const key of ['training_config', 'trainingConfig', 'compile_config']) {
      if (isObject(place[key])) return place[key];
    }
  }
  return undefined;
}

/** Activation name folded to lower case without separators ('hard_sigmoid' -> 'hardsigmoid'). */
const fold = (name: string) => name.replace(/[_\s]/g, '').toLowerCase();

/** The activation at the end of an output layer ('linear' when it has none Shoal can see). */
export function headActivation(graph: ModelGraph, id: string): string {
  let node: LayerNode | undefined = graph.layers.find((l) => l.id === id);
  for (let hops = 0; node && hops < graph.layers.length; hops++) {
    let spec = node.spec;
    if (spec.kind === 'timeDistributed') spec = spec.layer;
    // Dropout is the identity at inference: look through it to the layer it follows.
    if (spec.kind === 'dropout' && node.inputs.length === 1) {
      const from: string = node.inputs[0];
      node = graph.layers.find((l) => l.id === from);
      continue;
    }
    return 'activation' in spec && typeof spec.activation === 'string' ? fold(spec.activation) : 'linear';
  }
  return 'linear';
}

const PROBABILITY_HEADS: Record<'categorical' | 'binary', string[]> = { categorical: ['softmax'], binary: ['sigmoid', 'hardsigmoid'] };

/** Whether the head leaves logits for this loss (it has no softmax / sigmoid that fits it). */
function inferFromLogits(loss: LossName, activation: string): boolean {
  if (loss === 'meanSquaredError' || loss === 'meanAbsoluteError') return false;
  const family = loss === 'binaryCrossentropy' ? 'binary' : 'categorical';
  return !PROBABILITY_HEADS[family].includes(activation);
}

/** The entry of a per-output setting (one value for all, a list in output order, or a dict by name). */
function perOutput(value: unknown, outputs: string[], index: number, isSingle: (v: unknown) => boolean, what: string): unknown {
  if (value === undefined || value === null) return undefined;
  if (Array.isArray(value)) {
    if (value.length !== outputs.length) throw new Error(`The training config's "${what}" lists ${value.length} entries for ${outputs.length} model outputs.`);
    return value[index];
  }
  if (isSingle(value)) return value;
  if (isObject(value)) return value[outputs[index]];
  throw new Error(`The training config's "${what}" ${JSON.stringify(value)} is not a single value, a list or a dict by output.`);
}

const isLossValue = (v: unknown) => typeof v === 'string' || (isObject(v) && typeof v.class_name === 'string');

export function trainingSpecFor(graph: ModelGraph, modelDoc: unknown | undefined, options: { loss?: string; fromLogits?: boolean }): TrainingSpecResult {
  if (graph.outputs.length === 0) throw new Error(`Model "${graph.name}" has no outputs to train.`);
  const config = modelDoc !== undefined ? trainingConfigOf(modelDoc) : undefined;
  // --loss replaces the file's losses; its loss weights still apply.
  const configLoss = config && options.loss === undefined ? read(config, 'loss') : undefined;
  const configWeights = config ? read(config, 'loss_weights') : undefined;
  const notes: string[] = [];
  if (isObject(configLoss) && !isLossValue(configLoss)) {
    const unknown = Object.keys(configLoss).filter((k) => !graph.outputs.includes(k));
    if (unknown.length > 0) notes.push(`The training config names losses for ${unknown.join(', ')}, which are not outputs of the model; they are ignored.`);
  }
  const outputs: OutputLoss[] = [];
  graph.outputs.forEach((id, index) => {
    const node = graph.layers.find((l) => l.id === id);
    if (!node) throw new Error(`Output "${id}" is not a layer of model "${graph.name}".`);
    const activation = headActivation(graph, id);
    const lastDim = node.outputShape.length > 0 ? node.outputShape[node.outputShape.length - 1] : 1;
    let parsed: ParsedLoss;
    let source: string;
    if (options.loss !== undefined) {
      parsed = parseLoss(options.loss);
      source = 'the --loss option';
    } else if (configLoss !== undefined && configLoss !== null) {
      const entry = perOutput(configLoss, graph.outputs, index, isLossValue, 'loss');
      if (entry === undefined || entry === null) {
        notes.push(`${id}: the training config gives this output no loss, so it is not trained (as in Keras).`);
        return;
      }
      parsed = parseLoss(entry);
      source = "the model file's training config";
    } else {
      parsed = { loss: defaultLoss(lastDim, activation), ignored: [] };
      source = `a default: the model file and --loss give no loss, and the output ${defaultReason(lastDim, activation)}`;
    }
    const weightEntry = perOutput(configWeights, graph.outputs, index, (v) => typeof v === 'number', 'loss_weights');
    const weight = typeof weightEntry === 'number' ? weightEntry : 1;
    let fromLogits: boolean;
    let logitsWhy: string;
    if (options.fromLogits !== undefined) {
      fromLogits = options.fromLogits;
      logitsWhy = 'set by the --from-logits option';
    } else if (parsed.fromLogits !== undefined) {
      fromLogits = parsed.fromLogits;
      logitsWhy = "the loss config's from_logits";
    } else {
      fromLogits = inferFromLogits(parsed.loss, activation);
      logitsWhy = `the head's activation is ${activation}`;
    }
    const isRegression = parsed.loss === 'meanSquaredError' || parsed.loss === 'meanAbsoluteError';
    const logitsNote = isRegression ? '' : `, ${fromLogits ? 'from logits' : 'on probabilities'} (${logitsWhy})`;
    const weightNote = weight !== 1 ? `, weight ${weight}` : '';
    notes.push(`${id}: ${parsed.loss} from ${source}${logitsNote}${weightNote}.`);
    if (parsed.ignored.length > 0) notes.push(`${id}: Shoal ignores the loss options ${parsed.ignored.join(', ')}.`);
    if (!isRegression && !fromLogits && inferFromLogits(parsed.loss, activation)) {
      notes.push(`${id}: the loss treats the outputs as probabilities, but the head's activation is ${activation}; check from_logits.`);
    }
    outputs.push({ output: id, loss: parsed.loss, fromLogits, weight, metric: metricFor(parsed.loss) });
  });
  if (outputs.length === 0) throw new Error(`The training config of model "${graph.name}" gives none of its outputs a loss.`);
  return { outputs, notes };
}

function defaultLoss(lastDim: number, activation: string): LossName {
  if (lastDim > 1) return 'sparseCategoricalCrossentropy';
  return PROBABILITY_HEADS.binary.includes(activation) ? 'binaryCrossentropy' : 'meanSquaredError';
}

function defaultReason(lastDim: number, activation: string): string {
  if (lastDim > 1) return `has ${lastDim} values per position, read as class scores with class-index targets`;
  if (PROBABILITY_HEADS.binary.includes(activation)) return `is one value with a ${activation} head, read as a binary class probability`;
  return `is one value with a ${activation} head, read as a regression target`;
}
