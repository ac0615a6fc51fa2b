// `npm test`: first the type check (`tsc -b`: every layer's tsconfig) and the linter (`eslint .`), then
// the unit and integration tests (Vitest, real agent processes), then the end-to-end tests (Playwright
// driving the browser shell in Chromium). Prints one line per check, ends with one "N passed, N failed,
// N skipped" line over both runners, and exits non-zero if a check or a test failed.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..');
const results = join(root, 'test-results');
rmSync(join(results, 'vitest.json'), { force: true });
rmSync(join(results, 'playwright.json'), { force: true });
mkdirSync(results, { recursive: true });

const run = (args, env = {}) => spawnSync(process.execPath, args, { cwd: root, stdio: 'inherit', env: { ...process.env, ...env } });

// Type check and lint before the tests (esbuild and Vitest strip types without checking them). Both run
// even when the first fails, so one CI run lists every error; the tests run too, and the run fails.
const checks = [
  { name: 'typecheck (tsc -b: engine, node, renderer, test projects)', args: ['node_modules/typescript/bin/tsc', '-b', 'tsconfig.json'] },
  { name: 'lint (eslint .)', args: ['node_modules/eslint/bin/eslint.js', '.'] },
].map(({ name, args }) => {
  const ok = run(args).status === 0;
  console.log(`${ok ? 'ok    ' : 'FAILED'} ${name}`);
  return { name, ok };
});
const failedChecks = checks.filter((c) => !c.ok).map((c) => c.name);

const build = run(['scripts/build.mjs']);
if (build.status !== 0) process.exit(build.status ?? 1);

const vitest = run(['node_modules/vitest/vitest.mjs', 'run']);
const playwright = run(['node_modules/@playwright/test/cli.js', 'test', '--reporter=list,json'], {
  PLAYWRIGHT_JSON_OUTPUT_NAME: join(results, 'playwright.json'),
});

const counts = { passed: 0, failed: 0, skipped: 0 };
const vitestFile = join(results, 'vitest.json');
if (existsSync(vitestFile)) {
  const report = JSON.parse(readFileSync(vitestFile, 'utf8'));
  counts.passed += report.numPassedTests;
  counts.failed += report.numFailedTests;
  counts.skipped += report.numPendingTests + report.numTodoTests;
} else counts.failed += 1;

const playwrightFile = join(results, 'playwright.json');
if (existsSync(playwrightFile)) {
  const { stats } = JSON.parse(readFileSync(playwrightFile, 'utf8'));
  counts.passed += stats.expected + (stats.flaky ?? 0);
  counts.failed += stats.unexpected;
  counts.skipped += stats.skipped;
} else counts.failed += 1;

const ok = failedChecks.length === 0 && vitest.status === 0 && playwright.status === 0 && counts.failed === 0;
console.log(`\ntests: ${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped`);
if (failedChecks.length > 0) console.log(`checks failed: ${failedChecks.join('; ')} (see their errors above)`);
process.exit(ok ? 0 : 1);
