import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

/**
 * Four projects: `unit` (test/unit: in-process, no built bundles, no real hosts; `npm run test:fast`),
 * `fuzz` (test/fuzz: seeded mutations of plans, clusters and models), `integration`
 * (test/integration: real agent processes, real sshd; `npm run test:integration`) and `faults`
 * (test/faults: agents and coordinators killed and paused, run folders taken away).
 * `vitest run` (and `npm test`) runs them all, in that order. Only the integration and faults projects build
 * the Node bundles (their global setup) and run their files one at a time; unit files run in parallel.
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
