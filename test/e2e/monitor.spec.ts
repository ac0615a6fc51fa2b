import { mkdirSync, readFileSync } from 'node:fs';
import type { Page } from '@playwright/test';
import { expect, test } from './studioFixture';

/**
 * The Monitor on the browser shell with real agents: the merged timeline of all ranks against the
 * plan's prediction, the per-agent table, logs filtered by rank, exports, and an alert naming a lost rank.
 */
async function startJob(page: Page, url: string, epochs: string): Promise<void> {
  await page.goto(url);
  await expect(page.getByTestId('status')).toContainText('Ready', { timeout: 30_000 });
  await page.getByTestId('model-picker').selectOption('mlp');
  await page.getByTestId('preset-picker').selectOption('pp2-dp2');
  await page.getByTestId('agents-input').fill('4');
  await page.getByTestId('epochs-input').fill(epochs);
  await expect(page.getByTestId('diagnostics')).toContainText('Plan is valid');
  await page.getByTestId('train-button').click();
}

const points = (page: Page, id: string) => async () => Number(await page.getByTestId(id).getAttribute('data-points'));

test('the monitor shows every rank on the merged timeline, fills the agent table, filters logs and exports CSV and the plan', async ({ page, studio }) => {
  test.setTimeout(6 * 60_000);
  mkdirSync('test-results', { recursive: true });
  await startJob(page, studio.url, '0.5');
  await expect.poll(points(page, 'loss-chart'), { timeout: 3 * 60_000, intervals: [500] }).toBeGreaterThan(0);

  // The merged timeline: a row per rank (2 stages × 2 replicas), the plan's two stages under it.
  const timeline = page.getByTestId('measured-timeline');
  await expect(timeline.getByTestId('gantt-row')).toHaveCount(4, { timeout: 60_000 });
  for (const rank of [0, 1, 2, 3]) await expect(timeline.locator(`[data-testid="gantt-row"][data-rank="${rank}"] rect[data-kind]`).first()).toBeAttached();
  await expect(timeline.getByTestId('gantt-predicted-row')).toHaveCount(2);
  await expect(timeline.locator('[data-testid="gantt-row"] rect[data-kind="allreduce"]').first()).toBeAttached();
  const firstStep = Number(await timeline.getAttribute('data-step'));
  // It follows the job: a later sampled step replaces it.
  await expect.poll(async () => Number(await timeline.getAttribute('data-step')), { timeout: 2 * 60_000 }).toBeGreaterThan(firstStep);
  const stepOptions = timeline.getByTestId('timeline-step').locator('option');
  expect(await stepOptions.count()).toBeGreaterThanOrEqual(3);
  // Pick an older sampled step: the view stays on it.
  await timeline.getByTestId('timeline-step').selectOption(String(firstStep));
  await expect(timeline).toHaveAttribute('data-step', String(firstStep));
  await expect(timeline.getByTestId('gantt-row')).toHaveCount(4);
  await timeline.getByTestId('timeline-step').selectOption('');

  // Per-agent table: every rank with its host, a busy share and its activation memory.
  const table = page.getByTestId('rank-table');
  await expect(table.getByTestId('rank-row')).toHaveCount(4);
  for (let i = 0; i < 4; i++) {
    const cells = table.getByTestId('rank-row').nth(i).locator('td');
    await expect(cells.nth(0)).toHaveText(String(i));
    await expect(cells.nth(1)).not.toHaveText('—');
    await expect(cells.nth(4)).toHaveText(/^\d+%$/);
  }
  // Stage 0 stashes activations for its backward passes.
  await expect(table.locator('[data-testid="rank-row"][data-rank="0"] td').nth(6)).not.toHaveText('0 B');
  await page.screenshot({ path: 'test-results/monitor-live.png', fullPage: true });

  // Logs filtered by one rank show that rank's lines only.
  const rankPicker = page.getByTestId('log-rank');
  const ranks = (await rankPicker.locator('option').evaluateAll((options) => options.map((o) => (o as HTMLOptionElement).value))).filter((v) => /^\d+$/.test(v));
  const lines = page.getByTestId('log-line');
  const total = await lines.count();
  expect(total).toBeGreaterThan(0);
  const choice = ranks[0] ?? 'none';
  await rankPicker.selectOption(choice);
  const shown = await lines.evaluateAll((els) => els.map((el) => el.getAttribute('data-rank')));
  expect(shown.length).toBeGreaterThan(0);
  expect(shown.every((r) => r === (choice === 'none' ? '' : choice))).toBe(true);
  await rankPicker.selectOption('');
  await expect.poll(() => lines.count()).toBeGreaterThanOrEqual(total);

  await expect(page.getByTestId('final-accuracy')).toBeVisible({ timeout: 4 * 60_000 });
  const steps = await points(page, 'loss-chart')();
  const evals = await points(page, 'accuracy-chart')();
  expect(steps).toBeGreaterThan(10);

  // Export CSV: a header and one row per step.
  const [csvDownload] = await Promise.all([page.waitForEvent('download'), page.getByTestId('export-csv').click()]);
  expect(csvDownload.suggestedFilename()).toMatch(/^mlp-.*-metrics\.csv$/);
  const csvPath = await csvDownload.path();
  const csv = readFileSync(csvPath, 'utf8').trimEnd().split('\n');
  expect(csv[0]).toBe('step,epoch,loss,samples_per_sec,step_ms,comm_wait_ms,validation_accuracy,validation_loss');
  const rows = csv.slice(1).map((line) => line.split(','));
  expect(rows.filter((r) => r[1] !== '').length).toBe(steps);
  expect(rows.filter((r) => r[6] !== '').length).toBe(evals);
  expect(rows.every((r) => r.length === 8)).toBe(true);
  expect(Number(rows[0][2])).toBeGreaterThan(0);
  await csvDownload.saveAs('test-results/monitor-metrics.csv');

  // Export the plan: the pp2-dp2 plan the job ran.
  const [planDownload] = await Promise.all([page.waitForEvent('download'), page.getByTestId('export-plan').click()]);
  const plan = JSON.parse(readFileSync(await planDownload.path(), 'utf8')) as { model: string; stages: Array<{ layers: string[] }> };
  expect(plan.model).toBe('mlp');
  expect(plan.stages).toHaveLength(2);
  await page.screenshot({ path: 'test-results/monitor-final.png', fullPage: true });
});

test('a lost agent raises an alert naming its rank, which can be dismissed', async ({ page, studio }) => {
  test.setTimeout(4 * 60_000);
  await startJob(page, studio.url, '20');
  const agents = page.getByTestId('membership-agent');
  await expect(agents).toHaveCount(4, { timeout: 2 * 60_000 });
  await expect.poll(points(page, 'loss-chart'), { timeout: 2 * 60_000 }).toBeGreaterThan(0);
  // Kill the agent of rank 3 (its pid is in the membership table): the coordinator loses it.
  const row = agents.filter({ has: page.locator('td:first-child', { hasText: /^3$/ }) });
  const pid = Number(await row.locator('td').nth(2).textContent());
  expect(pid).toBeGreaterThan(0);
  process.kill(pid, 'SIGKILL');

  const alert = page.getByTestId('alert').filter({ hasText: 'Agent lost' });
  await expect(alert).toBeVisible({ timeout: 60_000 });
  await expect(alert).toHaveAttribute('data-rank', '3');
  await expect(alert).toContainText('rank 3');
  // Every survivor trains in the new generation: three re-planned, none waiting, one lost.
  await expect(page.getByTestId('membership-lost')).toHaveText('1 lost', { timeout: 60_000 });
  await expect(page.getByTestId('membership-training')).toHaveText('3 training');
  await expect(page.getByTestId('membership-waiting')).toHaveText('0 waiting');
  await expect(agents).toHaveCount(3);
  await page.screenshot({ path: 'test-results/monitor-alert.png', fullPage: true });
  await alert.getByTestId('alert-dismiss').click();
  await expect(page.getByTestId('alert').filter({ hasText: 'Agent lost' })).toHaveCount(0);
  await page.getByTestId('stop-button').click();
  await expect(page.getByTestId('status')).toContainText(/Stopped|Failed|Finished/, { timeout: 60_000 });
});
