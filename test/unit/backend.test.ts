import * as tf from '@tensorflow/tfjs-core';
import { createRequire } from 'node:module';
import { afterEach, describe, expect, it } from 'vitest';
import { selectBackend } from '../../agents/backend/selectBackend.js';

/** On these test machines tfjs-node and tfjs-node-gpu cannot be installed (they download libtensorflow). */
const nativeInstalled = (pkg: string) => {
  try {
    createRequire(import.meta.url).resolve(pkg);
    return true;
  } catch {
    return false;
  }
};

describe('selectBackend', () => {
  const saved = process.env.SHOAL_BACKEND;
  afterEach(() => {
    if (saved === undefined) delete process.env.SHOAL_BACKEND;
    else process.env.SHOAL_BACKEND = saved;
  });

  it.skipIf(nativeInstalled('@tensorflow/tfjs-node') || nativeInstalled('@tensorflow/tfjs-node-gpu'))(
    'picks wasm here and says why the native backends were skipped',
    async () => {
      delete process.env.SHOAL_BACKEND;
      const lines: string[] = [];
      const chosen = await selectBackend({ log: (m) => lines.push(m) });
      expect(chosen.name).toBe('wasm');
      expect(chosen.package).toBe('@tensorflow/tfjs-backend-wasm');
      expect(tf.getBackend()).toBe('wasm');
      expect(chosen.detail).toMatch(/tensorflow-gpu skipped: @tensorflow\/tfjs-node-gpu not installed/);
      expect(chosen.detail).toMatch(/tensorflow skipped: @tensorflow\/tfjs-node not installed/);
      expect(lines).toHaveLength(3);
      // The conv2d filter gradient wasm lacks is in place once wasm is chosen.
      expect(tf.getKernel('Conv2DBackpropFilter', 'wasm')).toBeTruthy();
    },
  );

  it('honours prefer', async () => {
    delete process.env.SHOAL_BACKEND;
    const chosen = await selectBackend({ prefer: ['cpu', 'wasm'] });
    expect(chosen.name).toBe('cpu');
    expect(tf.getBackend()).toBe('cpu');
    expect(chosen.detail).not.toMatch(/skipped/);
    await expect(selectBackend({ prefer: ['webgl'] })).rejects.toThrow(/Unknown backend "webgl"/);
  });

  it('SHOAL_BACKEND forces a backend, overriding prefer', async () => {
    process.env.SHOAL_BACKEND = 'cpu';
    expect((await selectBackend({ prefer: ['wasm'] })).name).toBe('cpu');
    process.env.SHOAL_BACKEND = 'wasm';
    expect((await selectBackend()).name).toBe('wasm');
    expect(tf.getBackend()).toBe('wasm');
  });

  it.skipIf(nativeInstalled('@tensorflow/tfjs-node-gpu'))('an agent pinned to a GPU that cannot load tfjs-node-gpu fails saying what to install, never on the CPU silently', async () => {
    process.env.SHOAL_BACKEND = 'tensorflow-gpu';
    process.env.CUDA_VISIBLE_DEVICES = '3';
    try {
      await expect(selectBackend()).rejects.toThrow(
        /^this agent is pinned to GPU 3 \(CUDA_VISIBLE_DEVICES\) but tfjs-node-gpu cannot run it \(tensorflow-gpu skipped: @tensorflow\/tfjs-node-gpu not installed\)\. Install @tensorflow\/tfjs-node-gpu@4\.22\.0 .* or deploy with --allow-cpu-fallback to train on the CPU\.$/,
      );
    } finally {
      delete process.env.CUDA_VISIBLE_DEVICES;
    }
  });

  it.skipIf(nativeInstalled('@tensorflow/tfjs-node') || nativeInstalled('@tensorflow/tfjs-node-gpu'))(
    'SHOAL_BACKEND=tensorflow fails clearly instead of falling back',
    async () => {
      process.env.SHOAL_BACKEND = 'tensorflow';
      await expect(selectBackend()).rejects.toThrow(/SHOAL_BACKEND=tensorflow was requested but it cannot load.*tfjs-node not installed.*unset SHOAL_BACKEND/);
    },
  );

  it('rejects an unknown SHOAL_BACKEND', async () => {
    process.env.SHOAL_BACKEND = 'webgpu';
    await expect(selectBackend()).rejects.toThrow(/SHOAL_BACKEND="webgpu" is not a backend Shoal knows/);
  });
});
