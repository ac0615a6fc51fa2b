import { expect, test } from './studioFixture';

/**
 * In the studio: train mlp with the asynchronous (PipeMare) schedule and see, next to the loss,
 * each stage's delay, utilization, step-size multiplier and correction.
 */
test('an asynchronous run shows per-stage PipeMare statistics next to the loss', async ({ page, studio }) => {
  test.setTimeout(4 * 60_000);
  await page.goto(studio.url);
  await expect(page.getByTestId('status')).toContainText('Ready', { timeout: 30_000 });
  await page.getByTestId('model-picker').selectOption('mlp');
  await page.getByTestId('preset-picker').selectOption('pp2-dp1');
  await page.getByTestId('agents-input').fill('2');
  await page.getByTestId('epochs-input').fill('0.5');
  await page.getByTestId('schedule-picker').selectOption('async');
  await expect(page.getByTestId('diagnostics')).not.toContainText('not implemented');
  await page.getByTestId('train-button').click();

  const stats = page.getByTestId('pipeline-stats');
  await expect(stats).toBeVisible({ timeout: 120_000 });
  await expect(stats.locator('tbody tr')).toHaveCount(2);
  // Stage 0 of 2 sees two updates between a forward pass and its own update (p − s − 1, plus one
  // micro-batch of in-flight slack); the last stage none.
  await expect(stats.locator('tbody tr').nth(0).locator('td').nth(1)).toHaveText('2');
  await expect(stats.locator('tbody tr').nth(1).locator('td').nth(1)).toHaveText('0');
  await expect(page.getByTestId('final-accuracy')).toBeVisible({ timeout: 180_000 });
  await page.screenshot({ path: 'test-results/async-monitor.png' });
});
