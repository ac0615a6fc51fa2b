/**
 * Reading values out of a Keras layer config, which arrives as untrusted JSON. tfjs and Keras write
 * snake_case keys; hand-written tfjs configs use camelCase, so both are accepted. A value of the wrong
 * type is reported as a ConfigError, which the importer turns into a diagnostic.
 */
export type Json = Record<string, unknown>;

/** A config value of the wrong type or out of range: the model file is at fault. */
export class ConfigError extends Error {}

/**
 * A valid option that Shoal's own spec of the class does not model (channels-first data, a second
 * output…): the importer asks tfjs-layers to build the layer instead, or keeps it opaque.
 */
export class UnsupportedOption extends ConfigError {}

/** A layer size (units, filters, heads…) that is not a whole number ≥ 1: an error, not an opaque layer. */
export class SizeError extends ConfigError {}

/**
 * A value for a message: JSON, cut at 80 characters. JSON.stringify recurses, so a value nested
 * thousands deep would overflow the stack inside an error message; that becomes a description.
 */
export function preview(value: unknown): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch {
    return Array.isArray(value) ? '(a deeply nested list)' : '(a deeply nested value)';
  }
  if (text === undefined) return String(value);
  return text.length > 80 ? `${text.slice(0, 77)}…` : text;
}

export function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const camel = (key: string) => key.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());

/** The value under `key` (snake_case) or its camelCase twin; undefined and null both mean absent. */
export function read(config: Json, key: string): unknown {
  const value = config[key] ?? config[camel(key)];
  return value === null ? undefined : value;
}

export function int(config: Json, key: string, fallback?: number): number {
  const value = read(config, key) ?? fallback;
  if (typeof value !== 'number' || !Number.isInteger(value)) throw new ConfigError(`"${key}" should be an integer, got ${preview(value)}.`);
  return value;
}

/** A layer size: a whole number of at least 1 (negative units would make negative parameter counts). */
export function size(config: Json, key: string, fallback?: number): number {
  const raw = read(config, key) ?? fallback;
  if (typeof raw !== 'number' || !Number.isInteger(raw)) throw new ConfigError(`"${key}" should be a positive integer, got ${preview(raw)}.`);
  const value = raw;
  if (value < 1) throw new SizeError(`"${key}" is ${value}; a layer needs at least 1.`);
  return value;
}

export function num(config: Json, key: string, fallback: number): number {
  const value = read(config, key) ?? fallback;
  if (typeof value !== 'number') throw new ConfigError(`"${key}" should be a number, got ${preview(value)}.`);
  return value;
}

export function bool(config: Json, key: string, fallback: boolean): boolean {
  const value = read(config, key) ?? fallback;
  if (typeof value !== 'boolean') throw new ConfigError(`"${key}" should be true or false, got ${preview(value)}.`);
  return value;
}

export function str(config: Json, key: string, fallback?: string): string {
  const value = read(config, key) ?? fallback;
  if (typeof value !== 'string') throw new ConfigError(`"${key}" should be a string, got ${preview(value)}.`);
  return value;
}

/** One of `choices`; Keras configs sometimes capitalise them differently ('SAME'). */
export function choice<T extends string>(config: Json, key: string, choices: readonly T[], fallback: T): T {
  const value = str(config, key, fallback).toLowerCase();
  const found = choices.find((c) => c.toLowerCase() === value);
  if (!found) throw new ConfigError(`"${key}" is "${value}"; Shoal knows ${choices.map((c) => `"${c}"`).join(', ')}.`);
  return found;
}

/** An n-tuple of integers; a single integer stands for the same value on every axis, as in Keras. */
export function ints(config: Json, key: string, n: number, fallback?: number | number[]): number[] {
  const value = read(config, key) ?? fallback;
  if (typeof value === 'number' && Number.isInteger(value)) return Array.from({ length: n }, () => value);
  if (Array.isArray(value) && value.length === n && value.every((v) => typeof v === 'number' && Number.isInteger(v))) return value as number[];
  throw new ConfigError(`"${key}" should be an integer or ${n} integers, got ${preview(value)}.`);
}

/** Keras activations arrive as a name, or (Keras 3) as a serialised object naming one. */
export function activationName(config: Json, key = 'activation'): string {
  const value = read(config, key) ?? 'linear';
  if (typeof value === 'string') return value;
  if (isObject(value) && typeof value.config === 'object' && isObject(value.config) && typeof value.config.name === 'string') return value.config.name;
  if (isObject(value) && typeof value.class_name === 'string') return value.class_name.toLowerCase();
  throw new ConfigError(`"${key}" should name an activation, got ${preview(value)}.`);
}
