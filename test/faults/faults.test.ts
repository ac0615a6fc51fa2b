import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, onTestFailed } from 'vitest';
import { latestRun } from '../support/faultJob.js';
import { faultContext, faultScenarios, outcome, whatItSaid } from '../support/faultScenarios.js';

/**
 * The failure model of README's "Failure model", asserted by injecting each fault into real
 * jobs (real coordinator and agent processes, the real `shoal` command, real files). Each scenario
 * says what the model promises and lists where a run departs from it (test/support/faultScenarios.ts,
 * shared with `npm run bench -- faults`): same parameters as the uninterrupted run where the
 * mathematics allow, otherwise a non-zero exit with a message saying what happened and what to do.
 */
const root = mkdtempSync(join(tmpdir(), 'shoal-faults-'));
const ctx = faultContext(root);
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('fault injection', () => {
  it('an uninterrupted run (dp2, 8 virtual nodes), the reference for the parameters', async () => {
    expect((await ctx.reference()).size).toBeGreaterThan(0);
  }, 240_000);

  for (const scenario of faultScenarios) {
    it(`${scenario.name}: ${scenario.promise}`, async () => {
      // A job that hangs past the test's time: what it had said by then, and its last step.
      onTestFailed(() => {
        const run = latestRun();
        const steps = run?.events.flatMap((e) => (e.type === 'step' ? [e.step] : [])) ?? [];
        if (run) console.error(`${scenario.name}: last step ${steps.at(-1) ?? 'none'}; what the job said:\n${whatItSaid(run)}`);
      });
      const run = await scenario.run(ctx);
      const problems = await scenario.check(run, ctx);
      expect(problems, `${outcome(run)}; what the job said:\n${whatItSaid(run)}`).toEqual([]);
    }, 240_000);
  }
});
