/**
 * Fault-injection benchmark: the scenarios of test/faults — agents and coordinators
 * SIGKILLed and SIGSTOPped, a corrupt checkpoint, a read-only checkpoint folder, a deleted run
 * folder, two jobs on one --out — run once each, with what happened beside what README's "Failure
 * model" promises, the seconds from the fault to the next completed step, and the steps run again.
 *
 *   npm run bench -- faults [--only <text in a scenario's name>]
 *
 * The scenarios and their checks are test/support/faultScenarios.ts, shared with the test suite.
 * Exits 1 when a scenario departs from its promise.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { faultContext, faultScenarios, outcome, recoverySeconds, stepsRedone, whatItSaid } from '../test/support/faultScenarios.js';
import { STEPS } from '../test/support/faultJob.js';
import { args } from './lib/args.js';
import { report, type Column } from './lib/report.js';

const only = args.includes('--only') ? args[args.indexOf('--only') + 1] ?? '' : '';
// Local jobs start the bundled coordinator and agent: build them first, as the tests' global setup does.
execFileSync(process.execPath, [fileURLToPath(new URL('../scripts/build.mjs', import.meta.url)), '--node'], { stdio: 'inherit' });

interface Row {
  scenario: string;
  outcome: string;
  asStated: string;
  recoverySeconds: number | null;
  stepsRedone: number;
  wallSeconds: number;
  problems: string[];
}

const root = mkdtempSync(join(tmpdir(), 'shoal-bench-faults-'));
const ctx = faultContext(root);
const rows: Row[] = [];
try {
  const started = performance.now();
  await ctx.reference();
  const referenceSeconds = (performance.now() - started) / 1000;
  for (const scenario of faultScenarios.filter((s) => s.name.includes(only))) {
    const t0 = performance.now();
    const run = await scenario.run(ctx);
    const wallSeconds = (performance.now() - t0) / 1000;
    const problems = await scenario.check(run, ctx);
    rows.push({ scenario: scenario.name, outcome: outcome(run), asStated: problems.length ? 'NO' : 'yes', recoverySeconds: recoverySeconds(run), stepsRedone: stepsRedone(run), wallSeconds, problems });
    console.log(`${scenario.name}: ${outcome(run)}${problems.length ? ` — departs from the failure model: ${problems.join('; ')}\n${whatItSaid(run)}` : ''}`);
  }
  const columns: Column<Row>[] = [
    { key: 'scenario', title: 'scenario' },
    { key: 'outcome', title: 'outcome' },
    { key: 'asStated', title: 'as stated [1]' },
    { key: 'recoverySeconds', title: 'recovery s [2]', align: 'right', format: (v) => (v === null ? '—' : (v as number).toFixed(2)) },
    { key: 'stepsRedone', title: 'steps redone [3]' },
    { key: 'wallSeconds', title: 'wall s', format: (v) => (v as number).toFixed(1) },
  ];
  report('faults', `Fault injection: MNIST mlp, ${STEPS}-step jobs (pp1-dp4 on 8 virtual nodes unless named), checkpoints every 4 steps`, rows, columns, [
    "What README's \"Failure model\" promises for the scenario held (test/support/faultScenarios.ts): parameters equal to an uninterrupted run (1e-4), or the exit code and message it names.",
    'From the fault (the kill, or the start of a pause) to the next completed step; a pause is included in it. — where no step follows (the job exits).',
    'A step discarded in flight after a loss, plus steps reported again after a fall-back to a checkpoint.',
    `The uninterrupted reference run took ${referenceSeconds.toFixed(1)} s; load average at the end ${loadavg().map((l) => l.toFixed(1)).join(', ')} (a 4-agent job on a machine loaded far past its cores may see agents silent past the heartbeat timeout while they set up).`,
  ], { loadAverage: loadavg() });
} finally {
  rmSync(root, { recursive: true, force: true });
}
process.exit(rows.some((r) => r.problems.length) ? 1 : 0);
