import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { build } from 'esbuild';
import { afterAll, describe, expect, it } from 'vitest';

const root = resolve(__dirname, '../..');

/**
 * selectBackend inside an esbuild CJS bundle, as the agent ships: built like scripts/build.mjs does,
 * copied with the .wasm files to a folder outside the repo (so node_modules cannot be reached) and run
 * there. Guards two bundle-only failures: the wasm binaries not found, and esbuild dropping the cpu
 * backend's side-effect import.
 */
describe('selectBackend from an agent-style bundle', () => {
  const dir = mkdtempSync(join(tmpdir(), 'shoal-bundle-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const entry = `
    import * as tf from '@tensorflow/tfjs-core';
    import '@tensorflow/tfjs-core/dist/register_all_gradients';
    import { selectBackend } from './agents/backend/selectBackend';
    selectBackend().then((chosen) => {
      const x = tf.ones([1, 5, 5, 2]) as tf.Tensor4D;
      const g = tf.grad((k: tf.Tensor) => tf.sum(tf.conv2d(x, k as tf.Tensor4D, 1, 'same')))(tf.ones([3, 3, 2, 1]));
      console.log(JSON.stringify({ ...chosen, active: tf.getBackend(), grad: Array.from(g.dataSync()) }));
    }, (err) => { console.log(JSON.stringify({ error: String(err.message).slice(0, 300) })); process.exit(1); });
  `;

  const runBundle = (backend?: string) => {
    const env = { ...process.env, SHOAL_BACKEND: backend ?? '' };
    const out = execFileSync(process.execPath, [join(dir, 'shoal-agent.cjs')], { cwd: dir, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    return JSON.parse(out.trim().split('\n').pop() as string);
  };

  it('builds, then loads wasm from the bundle folder and cpu too', async () => {
    await build({
      stdin: { contents: entry, resolveDir: root, loader: 'ts', sourcefile: 'bundle-entry.ts' },
      outfile: join(dir, 'shoal-agent.cjs'),
      bundle: true,
      platform: 'node',
      format: 'cjs',
      target: 'node20',
      logLevel: 'silent',
      external: ['@tensorflow/tfjs-node', '@tensorflow/tfjs-node-gpu', 'electron'],
    });
    const wasmDir = join(root, 'node_modules/@tensorflow/tfjs-backend-wasm/dist');
    for (const f of readdirSync(wasmDir).filter((f) => f.endsWith('.wasm'))) cpSync(join(wasmDir, f), join(dir, f));

    // Each filter tap of a 3×3 'same' conv over a 5×5 field of ones sees 5·5 minus the padded border.
    const expected = [16, 16, 20, 20, 16, 16, 20, 20, 25, 25, 20, 20, 16, 16, 20, 20, 16, 16];
    const wasm = runBundle();
    expect(wasm.name).toBe('wasm');
    expect(wasm.active).toBe('wasm');
    expect(wasm.detail).toContain(`binaries from ${dir}`);
    expect(wasm.grad).toEqual(expected);

    const cpu = runBundle('cpu');
    expect(cpu.active).toBe('cpu');
    expect(cpu.grad).toEqual(expected);
  }, 60_000);
});
