import { readdirSync, readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

/**
 * Five projects: `unit` and `unit-home` (test/unit: in-process, no built bundles, no real hosts;
 * `npm run test:fast`; the files that set HOME in child processes, the rest in worker threads),
 * `fuzz` (test/fuzz: seeded mutations of plans, clusters and models), `integration`
 * (test/integration: real agent processes, real sshd; `npm run test:integration`) and `faults`
 * (test/faults: agents and coordinators killed and paused, run folders taken away).
 * `vitest run` (and `npm test`) runs them all, in that order. Only the integration and faults projects build
 * the Node bundles (their global setup) and run their files one at a time; unit files run in parallel.
 */
const timeouts = { testTimeout: 120_000, hookTimeout: 60_000 };

/**
 * The tfjs ES-module sources the code imports by path (`@tensorflow/tfjs-core/dist/register_all_gradients`,
 * `@tensorflow/tfjs-layers/dist/index.js`, …), read from the sources so that a new one is included too.
 * Node cannot load them itself (their imports have no extensions), so without pre-bundling Vitest
 * evaluates their thousand-odd modules one by one in every test file that reaches them: most of the
 * unit suite's import time. All of them go into one pre-bundle, so that they share one copy of each
 * tfjs-layers module (two copies would not recognise each other's layers and tensors).
 */
function tfjsDeepImports(): string[] {
  const root = fileURLToPath(new URL('.', import.meta.url));
  const found = new Set<string>();
  for (const dir of ['engine', 'agents', 'renderer/src', 'test'].map((d) => join(root, d))) {
    for (const file of readdirSync(dir, { recursive: true, encoding: 'utf8' })) {
      if (!/\.tsx?$/.test(file)) continue;
      for (const m of readFileSync(join(dir, file), 'utf8').matchAll(/'(@tensorflow\/tfjs-[\w-]+\/dist\/[^']+)'/g)) found.add(m[1]);
    }
  }
  // Measured: with tfjs-layers' serialization modules in the pre-bundle, MultiHeadAttention's unit tests
  // see tfjs's own class instead of Shoal's (cause not found yet). They only reach tfjs-core's class
  // registry, which is shared, so they are loaded unbundled.
  return [...found].filter((p) => !/layers\/serialization\.js|serialization_utils/.test(p)).sort();
}

/**
 * Pre-bundled tfjs for the in-process tests. The packages' own names stay outside the bundle: Vitest
 * resolves them to their CommonJS builds, which Node loads, and the bundle imports those same
 * instances (one engine, one kernel and class registry), exactly as the unbundled modules did.
 */
const prebundledTfjs = {
  optimizer: { ssr: { enabled: true, include: tfjsDeepImports(), rolldownOptions: { external: [/^@tensorflow\/tfjs-[\w-]+$/] } } },
};

/** Unit test files that change the process environment (useTempHome, useTempConfigDir, or variables set by hand). */
function environmentTests(): string[] {
  const dir = fileURLToPath(new URL('./test/unit/', import.meta.url));
  return readdirSync(dir)
    .filter((f) => f.endsWith('.test.ts') && /useTempHome\(|useTempConfigDir\(|process\.env(\.\w+|\[[^\]]+\]) =[^=]/.test(readFileSync(join(dir, f), 'utf8')))
    .map((f) => `test/unit/${f}`);
}
const homeTests = environmentTests();
const unit = { ...timeouts, maxWorkers: Math.max(2, availableParallelism() - 1), deps: prebundledTfjs, sequence: { groupOrder: 0 } };

export default defineConfig({
  test: {
    reporters: ['default', 'json'],
    outputFile: { json: 'test-results/vitest.json' },
    projects: [
      // Unit files run in worker threads, which start faster and share one process's module cache; at
      // least two workers: Vitest's default (one less than the cores) would run one file at a time on two cores.
      { test: { ...unit, name: 'unit', include: ['test/unit/**/*.test.ts'], exclude: homeTests, pool: 'threads' } },
      // Files that point HOME at a temporary home run in child processes: a worker thread's os.homedir()
      // reads the process's real HOME, so there they would read and write the real user's ~/.ssh.
      { test: { ...unit, name: 'unit-home', include: homeTests, pool: 'forks' } },
      // Seeded fuzzing of every input file (10,000+ cases): pure and in-process, but too long for the fast loop.
      { test: { ...timeouts, name: 'fuzz', include: ['test/fuzz/**/*.test.ts'], sequence: { groupOrder: 1 } } },
      {
        test: {
          ...timeouts,
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          globalSetup: ['test/globalSetup.ts'],
          // Integration tests start real processes; two cores run them one file at a time.
          fileParallelism: false,
          sequence: { groupOrder: 2 },
        },
      },
      {
        test: {
          ...timeouts,
          name: 'faults',
          include: ['test/faults/**/*.test.ts'],
          globalSetup: ['test/globalSetup.ts'],
          // Fault injection (README's "Failure model"): killed and paused processes, one file at a time, last.
          fileParallelism: false,
          sequence: { groupOrder: 3 },
        },
      },
    ],
  },
});
