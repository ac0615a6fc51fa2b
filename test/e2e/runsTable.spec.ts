import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test, type Page } from '@playwright/test';
import { launchIsolatedStudio } from './isolatedStudio';

/**
 * The Runs table against real run folders: one trained by the CLI and copies of it changed the way
 * other runs differ (plan, loss, data, a deployed one's hosts), one of them owned by a live process
 * (run.lock). Sorting and filtering, a name/tags/notes edit that persists on disk and is checked at the
 * field, a comparison of three runs (overlay and every differing field), CSV and JSON export of a past
 * run's metrics, and deleting a run — refused while its job runs, moved to the trash once confirmed.
 */
const data = mkdtempSync(join(tmpdir(), 'shoal-e2e-runs-table-'));
const runs = join(data, 'runs');
const env = { SHOAL_DATA_DIR: data, XDG_CONFIG_HOME: join(data, 'config') };
let owner: ChildProcess | undefined;
test.afterAll(() => {
  owner?.kill('SIGKILL');
  rmSync(data, { recursive: true, force: true });
});

function trainOnce(): string {
  const result = spawnSync(process.execPath, ['bin/shoal.cjs', 'train', '--model', 'mlp', '--cluster', 'local:1', '--plan', 'pp1-dp1', '--steps', '8', '--json'], {
    cwd: process.cwd(),
    env: { ...process.env, ...env },
    encoding: 'utf8',
    timeout: 180_000,
  });
  if (result.status !== 0) throw new Error(`shoal train failed: ${result.stderr}`);
  const [id] = readdirSync(runs);
  return id;
}

/** A copy of run `from` as run `id`: job.json changed by `record`, every step's loss multiplied by `lossScale`. */
function cloneRun(from: string, id: string, createdAt: string, record: (r: Record<string, unknown>) => void, lossScale: number, running = false): string {
  const dir = join(runs, id);
  cpSync(join(runs, from), dir, { recursive: true });
  rmSync(join(dir, 'run.lock'), { force: true });
  const job = JSON.parse(readFileSync(join(dir, 'job.json'), 'utf8')) as Record<string, unknown>;
  job.jobId = id;
  job.createdAt = createdAt;
  record(job);
  writeFileSync(join(dir, 'job.json'), JSON.stringify(job, null, 2));
  const events = readFileSync(join(dir, 'events.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    // A run still going has no final word yet.
    .filter((line) => !running || !/"type":"(final|status)"/.test(line))
    .map((line) => {
      const e = JSON.parse(line) as Record<string, unknown>;
      if (e.type === 'step') e.loss = (e.loss as number) * lossScale;
      return JSON.stringify(e);
    });
  writeFileSync(join(dir, 'events.jsonl'), events.join('\n') + '\n');
  return dir;
}

async function openRuns(page: Page, url: string) {
  await page.goto(url);
  await expect(page.getByTestId('status')).toContainText('Ready', { timeout: 30_000 });
  await page.getByTestId('open-runs').click();
  return page.getByTestId('runs-view');
}

/** The Runs table fits its width: its scroll box has nothing beyond its right edge, and neither has the page. */
async function expectNoSidewaysScroll(page: Page): Promise<void> {
  const widths = await page.evaluate(() => {
    const box = document.querySelector('.runs-grid__scroll')!;
    return { box: box.clientWidth, content: box.scrollWidth, page: document.documentElement.clientWidth, pageContent: document.documentElement.scrollWidth };
  });
  expect(widths.content, `the runs table is ${widths.content} px wide in a ${widths.box} px box`).toBeLessThanOrEqual(widths.box);
  expect(widths.pageContent).toBeLessThanOrEqual(widths.page);
}

const rowIds = (page: Page) => page.getByTestId('run-row').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-run')));

test('sorts, filters, names, compares, exports and deletes runs', async ({ page }) => {
  test.setTimeout(5 * 60_000);
  const trained = trainOnce();
  const base = JSON.parse(readFileSync(join(runs, trained, 'job.json'), 'utf8')) as { plan: { microBatches: number; globalBatch: number } };
  cloneRun(trained, 'run-wide', '2030-01-02T00:00:00.000Z', (r) => ((r.plan as typeof base.plan).microBatches = 4), 0.5);
  const deployed = cloneRun(trained, 'run-deployed-with-a-very-long-identifier-that-would-overlap-titles', '2030-01-03T00:00:00.000Z', (r) => ((r.plan as typeof base.plan).globalBatch = base.plan.globalBatch * 2), 2);
  // A deploy record as `shoal deploy` writes it, for two SSH hosts.
  const host = (alias: string) => ({ alias, address: `${alias}.lab`, port: 22, user: 'me', identityFiles: [], useAgent: true, jump: [] });
  const coordinator = { listenHost: '127.0.0.1', port: 4000, pid: 10 };
  const record = { version: 1, jobId: 'run-deployed', createdAt: '2030-01-03T00:00:00.000Z', launcher: 'ssh', cluster: 'lab', hosts: [host('gpu1'), host('gpu2')], head: 'gpu1', model: 'mlp', steps: 8, coordinator, processes: [] };
  writeFileSync(join(deployed, 'deploy.json'), JSON.stringify(record));
  // A run whose job still runs: a live process on this host holds its lock.
  const busy = cloneRun(trained, 'run-busy', '2030-01-04T00:00:00.000Z', () => {}, 1, true);
  owner = spawn('sleep', ['600'], { stdio: 'ignore' });
  writeFileSync(join(busy, 'run.lock'), JSON.stringify({ pid: owner.pid, host: hostname(), since: '2030-01-04T00:00:00.000Z' }));

  const studio = await launchIsolatedStudio(env);
  try {
    await page.setViewportSize({ width: 1440, height: 900 });
    const view = await openRuns(page, studio.url);
    const rows = view.getByTestId('run-row');
    await expect(rows).toHaveCount(4);
    // Newest first; the deployed run lists its hosts, each run its final loss and duration.
    expect(await rowIds(page)).toEqual(['run-busy', 'run-deployed-with-a-very-long-identifier-that-would-overlap-titles', 'run-wide', trained]);
    await expect(view.locator('tr[data-run^="run-deployed"]')).toContainText('gpu1 +1'.replace(' +1', ', gpu2'));
    await expect(view.locator('tr[data-run="run-wide"]').getByTestId('run-status')).toContainText('finished');
    await expect(view.locator('tr[data-run="run-busy"]').getByTestId('run-status')).toContainText('running');

    // Sort by final loss: ascending, then descending.
    await view.getByTestId('sort-loss').click();
    const losses = async () => (await view.getByTestId('run-final-loss').allTextContents()).map(Number);
    const ascending = await losses();
    expect(ascending).toEqual([...ascending].sort((a, b) => a - b));
    expect((await rowIds(page))[0]).toBe('run-wide');
    await view.getByTestId('sort-loss').click();
    expect((await rowIds(page))[0]).toMatch(/^run-deployed/);
    await expect(view.locator('th[aria-sort="descending"]')).toContainText('Final loss');

    // Filter by text and by status.
    await view.getByTestId('runs-filter').fill('gpu2');
    await expect(rows).toHaveCount(1);
    await view.getByTestId('runs-filter').fill('');
    await view.getByTestId('runs-state-running').check();
    await expect(rows).toHaveCount(1);
    await expect(view.getByTestId('runs-count')).toHaveText('1 of 4 runs');
    await view.getByTestId('runs-state-running').uncheck();

    // Name, tag and note a run: bad input is said at its field, good input persists in run.meta.json.
    await view.locator('tr[data-run="run-wide"]').click();
    const detail = view.getByTestId('run-detail');
    await detail.getByTestId('run-name-input').fill('x'.repeat(121));
    await detail.getByTestId('run-tags-input').fill('baseline, a tag that is far too long to be a tag at all');
    await detail.getByTestId('run-meta-save').click();
    await expect(detail.getByTestId('run-name-error')).toHaveText('a run name has at most 120 characters');
    await expect(detail.getByTestId('run-tags-error')).toHaveText('tag 2: a tag has at most 40 characters');
    await expect(detail.getByTestId('run-name-input')).toHaveAttribute('aria-invalid', 'true');
    expect(existsSync(join(runs, 'run-wide', 'run.meta.json'))).toBe(false);
    await detail.getByTestId('run-name-input').fill('four micro-batches');
    await detail.getByTestId('run-tags-input').fill('baseline, sweep');
    await detail.getByTestId('run-notes-input').fill('Half the loss of the first run.');
    await detail.getByTestId('run-meta-save').click();
    await expect(detail.getByTestId('run-meta-saved')).toBeVisible();
    await expect(detail.getByTestId('run-name-error')).toHaveCount(0);
    expect(JSON.parse(readFileSync(join(runs, 'run-wide', 'run.meta.json'), 'utf8'))).toEqual({ version: 1, name: 'four micro-batches', tags: ['baseline', 'sweep'], notes: 'Half the loss of the first run.' });
    await expect(view.locator('tr[data-run="run-wide"]')).toContainText('four micro-batches');
    await view.getByTestId('runs-filter').fill('tag:sweep');
    await expect(rows).toHaveCount(1);
    await view.getByTestId('runs-filter').fill('');
    mkdirSync('test-results', { recursive: true });
    await page.screenshot({ path: 'test-results/runs-table.png' });
    await expectNoSidewaysScroll(page);

    // At 1024×700 the table still fits: nothing scrolls sideways, a cut cell keeps its full text in its
    // tooltip, and the columns a narrow table leaves out (dataset, hosts, tags, notes) are in the run's detail.
    await page.setViewportSize({ width: 1024, height: 700 });
    await expect(view.getByTestId('sort-notes')).toBeHidden();
    await expect(view.getByTestId('sort-hosts')).toBeHidden();
    await expect(view.getByTestId('sort-loss')).toBeVisible();
    await expectNoSidewaysScroll(page);
    await expect(view.locator('tr[data-run^="run-deployed"] td[data-col="name"]')).toHaveAttribute('title', 'run-deployed-with-a-very-long-identifier-that-would-overlap-titles');
    await expect(detail.getByTestId('run-facts')).toContainText('data mnist · 1 agent on this machine');
    await expect(detail.getByTestId('run-facts')).toContainText(/took .+ · final loss \d/);
    await expect(detail.getByTestId('run-tags-input')).toHaveValue('baseline, sweep');
    await expect(detail.getByTestId('run-notes-input')).toHaveValue('Half the loss of the first run.');
    await page.screenshot({ path: 'test-results/runs-table-1024.png' });
    await page.setViewportSize({ width: 1440, height: 900 });

    // CSV and JSON of this past run's metrics.
    const download = async (testId: string) => {
      const [file] = await Promise.all([page.waitForEvent('download'), detail.getByTestId(testId).click()]);
      return { name: file.suggestedFilename(), text: readFileSync((await file.path())!, 'utf8') };
    };
    const csv = await download('run-export-csv');
    expect(csv.name).toBe('mlp-run-wide-metrics.csv');
    const lines = csv.text.trim().split('\n');
    expect(lines[0]).toBe('step,epoch,loss,samples_per_sec,step_ms,comm_wait_ms,validation_accuracy,validation_loss');
    // A row per step, and the final evaluation (after the last step) on a row of its own.
    expect(lines).toHaveLength(1 + 8 + 1);
    expect(lines[1]).toMatch(/^0,0\.\d+,\d/);
    expect(lines[9]).toMatch(/^8,,,,,,0\.\d+,\d/);
    const json = await download('run-export-json');
    const exported = JSON.parse(json.text) as { run: { name: string }; curves: { loss: number[] }; plan: { microBatches: number } };
    expect(exported.run.name).toBe('four micro-batches');
    expect(exported.curves.loss).toHaveLength(8);
    expect(exported.plan.microBatches).toBe(4);

    // Compare three runs: three curves, a legend under each plot, every differing field.
    await view.getByRole('checkbox', { name: 'Compare four micro-batches' }).check();
    await view.getByRole('checkbox', { name: `Compare ${trained}` }).check();
    await view.getByRole('checkbox', { name: /^Compare run-deployed/ }).check();
    const compare = view.getByTestId('run-compare');
    await expect(compare).toHaveAttribute('data-runs', '3');
    await expect(compare.getByTestId('compare-loss')).toHaveAttribute('data-series', '3');
    await expect(compare.getByTestId('compare-loss')).toHaveAttribute('data-points', '8,8,8');
    const diff = compare.getByTestId('plan-diff');
    await expect(diff.locator('[data-path="plan.microBatches"] td')).toHaveCount(4);
    await expect(diff.locator('[data-path="plan.globalBatch"]')).toBeVisible();
    await expect(diff.locator('[data-path="hosts"]')).toContainText('gpu1, gpu2');
    await expect(diff.locator('[data-path="name"]')).toContainText('four micro-batches');
    // The legend never overlaps the chart's title.
    for (const chart of await compare.locator('figure.chart').all()) {
      const title = await chart.locator('.chart__title').boundingBox();
      const legend = await chart.getByTestId('overlay-legend').boundingBox();
      expect(legend!.y).toBeGreaterThanOrEqual(title!.y + title!.height);
    }
    await page.screenshot({ path: 'test-results/runs-compare-three.png' });
    await view.getByTestId('compare-clear').click();

    // Deleting: a run shown running cannot be deleted, and says why.
    await view.locator('tr[data-run="run-busy"]').click();
    await expect(view.getByTestId('run-detail').getByTestId('run-delete')).toBeDisabled();
    await expect(view.getByTestId('run-detail').getByTestId('run-actions')).toContainText('Stop the run to delete it.');
    // A job that took the run's folder after the table was read: the studio refuses, naming the job.
    writeFileSync(join(runs, 'run-wide', 'run.lock'), JSON.stringify({ pid: owner.pid, host: hostname(), since: '2030-01-05T00:00:00.000Z' }));
    await view.locator('tr[data-run="run-wide"]').click();
    await view.getByTestId('run-detail').getByTestId('run-delete').click();
    await view.getByTestId('run-delete-trash').click();
    await expect(view.getByTestId('run-delete-error')).toContainText(`Run run-wide is still running (pid ${owner.pid} on ${hostname()}, since 2030-01-05T00:00:00.000Z): stop it before deleting it.`);
    expect(existsSync(join(runs, 'run-wide', 'job.json'))).toBe(true);
    rmSync(join(runs, 'run-wide', 'run.lock'));

    await view.locator('tr[data-run="run-wide"]').click();
    await view.getByTestId('run-detail').getByTestId('run-delete').click();
    const confirm = view.getByTestId('run-delete-confirm');
    await expect(confirm).toContainText('Delete run four micro-batches?');
    await page.screenshot({ path: 'test-results/runs-delete-confirm.png' });
    // Escape cancels the question, not the Runs view.
    await page.keyboard.press('Escape');
    await expect(confirm).toHaveCount(0);
    await expect(view).toBeVisible();
    await view.getByTestId('run-delete').click();
    await view.getByTestId('run-delete-trash').click();
    await expect(view.getByTestId('runs-message')).toContainText(`moved to ${join(data, 'trash', 'runs', 'run-wide')}`);
    await expect(rows).toHaveCount(3);
    expect(existsSync(join(runs, 'run-wide'))).toBe(false);
    expect(existsSync(join(data, 'trash', 'runs', 'run-wide', 'run.meta.json'))).toBe(true);
  } finally {
    await studio.close();
  }
});
