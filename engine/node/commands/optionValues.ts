import { cpus } from 'node:os';
import { parseClusterName, type LocalCluster } from '../../cluster/cluster.js';
import { LIMITS, LOCAL_AGENTS_OVERRIDE } from '../../plan/limits.js';

/**
 * Strict reading of numeric command-line options, shared by every command (train, plan, resume, deploy):
 * "abc", "1.5" where a whole number is wanted, "-5" or "0" where a positive one is, "1e400" (which
 * Number() reads as Infinity) and "0x10" are refused with a message that names the option, the value and
 * what is accepted — never turned into NaN steps or silently ignored.
 */
export type OptionValues = Record<string, string | boolean | undefined>;

export class OptionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'OptionError';
  }
}

const DECIMAL = /^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i;

interface Bounds {
  /** Smallest accepted value (inclusive); default 1 for integers. */
  min?: number;
  /** Smallest accepted value, exclusive (e.g. 0 for a learning rate). */
  above?: number;
  /** Largest accepted value (inclusive). */
  max?: number;
  /** Largest accepted value, exclusive (e.g. 1 for a fraction). */
  below?: number;
  /** An example of a good value, for the message. */
  example?: string;
}

function accepted(kind: 'whole number' | 'number', b: Bounds): string {
  const lower = b.above !== undefined ? `above ${b.above}` : b.min !== undefined ? `at least ${b.min}` : '';
  const upper = b.below !== undefined ? `below ${b.below}` : b.max !== undefined && b.max < Number.MAX_SAFE_INTEGER ? `at most ${b.max}` : '';
  const range = [lower, upper].filter(Boolean).join(' and ');
  return `a ${kind}${range ? ` ${range}` : ''}${b.example ? `, e.g. ${b.example}` : ''}`;
}

function read(values: OptionValues, key: string): string | undefined {
  const value = values[key];
  if (value === undefined) return undefined;
  if (typeof value === 'boolean') throw new OptionError(`--${key} needs a value.`);
  return value.trim();
}

/**
 * `--steps -5` as `--steps=-5`: Node's parseArgs reads a value that starts with a dash as another option
 * and answers "argument is ambiguous"; joined, the value reaches the strict checks below, which say what
 * is accepted. Only a negative number after a long option is joined.
 */
export function joinNegativeValues(args: readonly string[]): string[] {
  const out: string[] = [];
  for (const arg of args) {
    const previous = out[out.length - 1];
    if (previous !== undefined && /^--[a-z][\w-]*$/.test(previous) && /^-(\d|\.\d)/.test(arg)) out[out.length - 1] = `${previous}=${arg}`;
    else out.push(arg);
  }
  return out;
}

/** A finite decimal number within bounds, or undefined when the option is absent. */
export function numberOption(values: OptionValues, key: string, bounds: Bounds = {}): number | undefined {
  const text = read(values, key);
  if (text === undefined) return undefined;
  return checkNumber(`--${key}`, text, bounds, 'number');
}

/** A whole number within bounds (at least 1 unless `min` says otherwise), or undefined when absent. */
export function intOption(values: OptionValues, key: string, bounds: Bounds = {}): number | undefined {
  const text = read(values, key);
  if (text === undefined) return undefined;
  return checkNumber(`--${key}`, text, { min: 1, max: Number.MAX_SAFE_INTEGER, ...bounds }, 'whole number');
}

/** The same checks for a value that is not an option of its own (`--data synthetic:N`, `local:N`). */
export function checkNumber(name: string, text: string, b: Bounds, kind: 'whole number' | 'number'): number {
  const expected = accepted(kind, b);
  const refuse = (why: string) => new OptionError(`${name} ${JSON.stringify(text)}: ${why}; expected ${expected}.`);
  if (!DECIMAL.test(text)) throw refuse('not a number');
  const n = Number(text);
  if (!Number.isFinite(n)) throw refuse('too large to be a number (it reads as Infinity)');
  if (kind === 'whole number' && !Number.isInteger(n)) throw refuse('not a whole number');
  if ((b.min !== undefined && n < b.min) || (b.above !== undefined && n <= b.above)) throw refuse('too small');
  if ((b.max !== undefined && n > b.max) || (b.below !== undefined && n >= b.below)) throw refuse('too large');
  return n;
}

/** How many local agents may start: LIMITS.localAgents, or what SHOAL_MAX_LOCAL_AGENTS says. */
export function localAgentLimit(env: NodeJS.ProcessEnv = process.env): number {
  const text = env[LOCAL_AGENTS_OVERRIDE];
  if (text === undefined || text === '') return LIMITS.localAgents;
  return checkNumber(LOCAL_AGENTS_OVERRIDE, text, { min: 1, max: 100_000 }, 'whole number');
}

/**
 * `local` or `local:N`, capped (see parseClusterName); past the core count it still runs, with a
 * warning through `warn`, since agents beyond one per core share cores and run slower, not faster.
 */
export function localClusterOption(text: string, defaultAgents: number, warn: (line: string) => void): LocalCluster {
  const cluster = parseClusterName(text, defaultAgents, localAgentLimit());
  const cores = cpus().length;
  if (cluster.agents > Math.max(2, cores)) {
    warn(`${text} starts ${cluster.agents} agent processes on a machine with ${cores} cores: they will share cores (each agent uses one), which is slower per step than one per core.`);
  }
  return cluster;
}
