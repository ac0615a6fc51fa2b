import { existsSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { isLayerClass, registeredClasses, tfjs } from './tfjsLayers.js';

/** Files registered in this process, with the layer classes each added: a module is run once. */
const registered = new Map<string, string[]>();

/**
 * Runs a user's `--layers` module: a JavaScript file (CommonJS or ES module) that exports
 * `register(tf)`, which defines the user's layer classes (extending `tf.layers.Layer`) and registers
 * them with `tf.serialization.registerClass`, as tfjs documents for custom layers. Shoal hands it the
 * tfjs namespace its importer and agents build models with, so the classes land in the same registry.
 * Returns the layer classes the module registered. Every failure names the file and what to do.
 */
export async function registerUserLayers(file: string): Promise<string[]> {
  const path = resolve(file);
  const done = registered.get(path);
  if (done) return done;
  const fix = 'Pass a JavaScript file (.js, .cjs or .mjs) that exports register(tf), which defines your layer classes and registers each with tf.serialization.registerClass.';
  if (!existsSync(path)) throw new Error(`--layers ${path} does not exist. ${fix}`);
  if (statSync(path).isDirectory()) throw new Error(`--layers ${path} is a folder, not a module. ${fix}`);
  let module: { register?: unknown; default?: unknown };
  try {
    module = (await import(pathToFileURL(path).href)) as typeof module;
  } catch (err) {
    throw new Error(`--layers ${path} could not be loaded: ${(err as Error).message}. ${fix}`);
  }
  const fallback = module.default as { register?: unknown } | undefined;
  const register = typeof module.register === 'function' ? module.register : typeof fallback?.register === 'function' ? fallback.register : undefined;
  if (typeof register !== 'function') throw new Error(`--layers ${path} exports no register function (it exports ${Object.keys(module).join(', ') || 'nothing'}). ${fix}`);
  const before = new Set(Object.keys(registeredClasses()));
  try {
    await (register as (tf: typeof tfjs) => unknown)(tfjs);
  } catch (err) {
    throw new Error(`--layers ${path}: register(tf) threw: ${(err as Error).message}`);
  }
  const added = Object.entries(registeredClasses())
    .filter(([name, [cls]]) => !before.has(name) && isLayerClass(cls))
    .map(([name]) => name);
  if (added.length === 0) throw new Error(`--layers ${path}: register(tf) registered no layer class. ${fix}`);
  registered.set(path, added);
  return added;
}
