import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

/**
 * Three projects: `unit` (test/unit: in-process, no built bundles, no real hosts; `npm run test:fast`),
 * `fuzz` (test/fuzz: seeded mutations of plans, clusters and models) and `integration`
 * (test/integration: real agent processes, real sshd; `npm run test:integration`).
 * `vitest run` (and `npm test`) runs both, the unit project first. Only the integration project builds
 * the Node bundles (its global setup) and runs its files one at a time; unit files run in parallel.
 */
const timeouts = { testTimeout: 120_000, hookTimeout: 60_000 };

export default defineConfig({
  test: {
    reporters: ['default', 'json'],
    outputFile: { json: 'test-results/vitest.json' },
    projects: [
      // At least two workers: Vitest's default (one less than the cores) would run one file at a time on two cores.
      { test: { ...timeouts, name: 'unit', include: ['test/unit/**/*.test.ts'], maxWorkers: Math.max(2, availableParallelism() - 1), sequence: { groupOrder: 0 } } },
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
    ],
  },
});
