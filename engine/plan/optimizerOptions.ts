import { OptimizerSchema, type OptimizerConfig } from './plan.js';

/**
 * Optimizer configs from the names and options people write: a command line's `--optimizer adam --lr
 * 0.001`, or the optimizer a Keras or TensorFlow.js model was compiled with. Pure: no tfjs, no Node.
 */

type Kind = OptimizerConfig['kind'];

/** Accepted names (compared without case), each with the kind it means. */
const NAMES: Record<string, Kind> = {
  sgd: 'sgd',
  momentum: 'sgd',
  adam: 'adam',
  adamw: 'adamw',
  rmsprop: 'rmsprop',
  adagrad: 'adagrad',
};

/** Keras's default learning rates (tf.train has none but for Adam's, which is the same 0.001). */
const DEFAULT_LR: Record<Kind, number> = { sgd: 0.01, adam: 0.001, adamw: 0.001, rmsprop: 0.001, adagrad: 0.001 };

export const OPTIMIZER_NAMES = Object.keys(NAMES);

export interface OptimizerExtras {
  momentum?: number;
  nesterov?: boolean;
  weightDecay?: number;
}

/** Parse with the plan's schema (its defaults filled in), as one readable Error when it fails. */
function validated(config: Record<string, unknown>, what: string): OptimizerConfig {
  const parsed = OptimizerSchema.safeParse(config);
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.map((i) => `${i.path.join('.') || 'optimizer'}: ${i.message}`).join('; ');
  throw new Error(`Invalid ${what} optimizer settings: ${problems}`);
}

/**
 * The optimizer `name` with learning rate `lr` (absent: Keras's default for it) and the extra options
 * given. Names, without regard to case: sgd (Keras's SGD: momentum 0 unless given), momentum
 * (tf.train.momentum: SGD with momentum 0.9 unless given), adam, adamw (weight decay 0.004 unless
 * given, as Keras), rmsprop (momentum 0 unless given), adagrad. An option the optimizer has no use
 * for is an error when it would change something (momentum > 0 for Adam, say, or weight decay for
 * anything but AdamW: decoupled weight decay is adamw), and ignored when it is a no-op (0, false).
 */
export function optimizerFromOptions(name: string, lr: number | undefined, extra: OptimizerExtras = {}): OptimizerConfig {
  const key = name.trim().toLowerCase();
  const kind = NAMES[key];
  if (!kind) throw new Error(`Unknown optimizer "${name}"; accepted: ${OPTIMIZER_NAMES.join(', ')} (any case, e.g. SGD, Adam, AdamW, RMSprop).`);
  const takes = {
    momentum: kind === 'sgd' || kind === 'rmsprop',
    nesterov: kind === 'sgd',
    weightDecay: kind === 'adamw',
  };
  const given = { momentum: !!extra.momentum, nesterov: !!extra.nesterov, weightDecay: !!extra.weightDecay };
  for (const option of ['momentum', 'nesterov', 'weightDecay'] as const) {
    if (given[option] && !takes[option]) {
      const hint = option === 'weightDecay' ? ' (decoupled weight decay is the adamw optimizer)' : '';
      throw new Error(`The ${name} optimizer has no ${option} option${hint}.`);
    }
  }
  const config: Record<string, unknown> = { kind, learningRate: lr ?? DEFAULT_LR[kind] };
  if (kind === 'sgd') {
    config.momentum = extra.momentum ?? (key === 'momentum' ? 0.9 : 0);
    if (extra.nesterov !== undefined) config.nesterov = extra.nesterov;
  } else if (kind === 'rmsprop') {
    if (extra.momentum !== undefined) config.momentum = extra.momentum;
  } else if (kind === 'adamw') {
    if (extra.weightDecay !== undefined) config.weightDecay = extra.weightDecay;
  }
  return validated(config, `"${name}"`);
}

const isRecord = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null && !Array.isArray(x);

/** The first of `keys` that `config` holds as a finite number. */
function numberOf(config: Record<string, unknown>, ...keys: string[]): number | undefined {
  for (const key of keys) {
    const value = config[key];
    if (typeof value === 'number' && Number.isFinite(value)) return value;
  }
  return undefined;
}

/**
 * A learning rate: a number, or a Keras schedule's starting value (`{class_name: 'ExponentialDecay',
 * config: {initial_learning_rate}}`; Shoal runs a constant rate, so only where the schedule starts).
 */
function learningRateOf(config: Record<string, unknown>): number | undefined {
  const direct = numberOf(config, 'learning_rate', 'lr', 'learningRate');
  if (direct !== undefined) return direct;
  const schedule = config.learning_rate ?? config.lr;
  if (isRecord(schedule) && isRecord(schedule.config)) return numberOf(schedule.config, 'initial_learning_rate');
  return undefined;
}

/**
 * The optimizer a Keras or TensorFlow.js model was compiled with: `training_config.optimizer_config`
 * of its model.json, `{class_name, config}`. Keras writes snake_case (`learning_rate` or older `lr`,
 * `beta_1`, `rho`, `weight_decay`, ...), tfjs its optimizers' getConfig() (`learningRate`, `beta1`,
 * `decay`, `useNesterov`, ...); both are read. Keras's `decay` is a learning-rate decay (ignored), tfjs's
 * RMSProp `decay` is the average's (Keras's rho). Keras ≥ 2.11 Adam with `weight_decay` decays the
 * weights decoupled, so it is AdamW. Null when there is no optimizer config, or it names an optimizer
 * or a setting Shoal does not run (Adamax, Nadam, amsgrad, weight decay on anything but Adam/AdamW, ...), so
 * the caller can fall back to its own choice and say so.
 */
export function optimizerFromKeras(optimizerConfig: unknown): OptimizerConfig | null {
  if (!isRecord(optimizerConfig) || typeof optimizerConfig.class_name !== 'string') return null;
  const className = optimizerConfig.class_name.replace(/^Custom>/, '');
  const config = isRecord(optimizerConfig.config) ? optimizerConfig.config : {};
  const tfjsStyle = 'learningRate' in config || className === 'RMSProp' || className === 'Momentum';
  const lr = learningRateOf(config);
  const epsilon = numberOf(config, 'epsilon');
  const weightDecay = numberOf(config, 'weight_decay', 'weightDecay');
  const decays = weightDecay !== undefined && weightDecay > 0;
  let candidate: Record<string, unknown>;
  switch (className.toLowerCase()) {
    case 'sgd':
    case 'momentum': {
      if (decays) return null;
      const momentum = numberOf(config, 'momentum') ?? 0;
      const nesterov = config.nesterov ?? config.useNesterov;
      candidate = { kind: 'sgd', learningRate: lr ?? DEFAULT_LR.sgd, momentum, ...(nesterov === true ? { nesterov: true } : {}) };
      break;
    }
    case 'adam':
    case 'adamw': {
      if (config.amsgrad === true) return null;
      const adamw = className.toLowerCase() === 'adamw' || decays;
      candidate = {
        kind: adamw ? 'adamw' : 'adam',
        learningRate: lr ?? DEFAULT_LR.adam,
        beta1: numberOf(config, 'beta_1', 'beta1'),
        beta2: numberOf(config, 'beta_2', 'beta2'),
        epsilon,
        ...(adamw ? { weightDecay } : {}),
      };
      break;
    }
    case 'rmsprop':
      if (decays) return null;
      candidate = {
        kind: 'rmsprop',
        learningRate: lr ?? DEFAULT_LR.rmsprop,
        decay: numberOf(config, 'rho') ?? (tfjsStyle ? numberOf(config, 'decay') : undefined),
        momentum: numberOf(config, 'momentum'),
        epsilon,
        centered: typeof config.centered === 'boolean' ? config.centered : undefined,
      };
      break;
    case 'adagrad':
      if (decays) return null;
      candidate = {
        kind: 'adagrad',
        learningRate: lr ?? DEFAULT_LR.adagrad,
        initialAccumulatorValue: numberOf(config, 'initial_accumulator_value', 'initialAccumulatorValue'),
        epsilon,
      };
      break;
    default:
      return null;
  }
  // Absent options take the schema's defaults (Keras's); an epsilon of 0 or null means the default too.
  for (const key of Object.keys(candidate)) {
    if (candidate[key] === undefined || (key === 'epsilon' && !candidate[key])) delete candidate[key];
  }
  const parsed = OptimizerSchema.safeParse(candidate);
  return parsed.success ? parsed.data : null;
}

/** Optimizer state kept per parameter, in parameters' worth (the cost model's memory accounting). */
export function optimizerSlots(config: OptimizerConfig): number {
  switch (config.kind) {
    case 'sgd':
      return config.momentum > 0 ? 1 : 0;
    case 'adam':
    case 'adamw':
      return 2;
    case 'rmsprop':
      return 1 + (config.momentum > 0 ? 1 : 0) + (config.centered ? 1 : 0);
    case 'adagrad':
      return 1;
  }
}
