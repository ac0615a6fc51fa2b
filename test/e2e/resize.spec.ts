import { expect, test } from './studioFixture';

/**
 * In the studio: a running job gains an agent without a restart. The membership view moves to
 * the new generation (two ranks, the virtual nodes split over two replicas), the charts mark the step
 * it happened at, and the log says so.
 */
test('Add agent grows a running job: new generation in the membership view, a marker on the charts', async ({ page, studio }) => {
  test.setTimeout(5 * 60_000);
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(`page error: ${error.message} ${error.stack}`));
  await page.goto(studio.url);
  await expect(page.getByTestId('status')).toContainText('Ready', { timeout: 30_000 });
  await page.getByTestId('model-picker').selectOption('mlp');
  await page.getByTestId('preset-picker').selectOption('pp1-dp1');
  await page.getByTestId('agents-input').fill('1');
  // Two virtual nodes: one agent runs both; a second agent takes one of them.
  await page.getByTestId('virtual-nodes-input').fill('2');
  await page.getByTestId('epochs-input').fill('20');
  await expect(page.getByTestId('diagnostics')).toContainText('Plan is valid');
  await page.getByTestId('train-button').click();

  const generation = page.getByTestId('membership-generation');
  await expect(generation).toHaveAttribute('data-generation', /\d+/, { timeout: 120_000 });
  const first = Number(await generation.getAttribute('data-generation'));
  await expect(page.getByTestId('membership-agent')).toHaveCount(1);
  await expect(page.getByTestId('vnode-row')).toHaveCount(1);
  await expect(page.getByTestId('vnode-row')).toContainText('2 / 2');

  const add = page.getByTestId('add-agent-button');
  await expect(add).toBeEnabled();
  await add.click();
  await expect(generation).toHaveAttribute('data-generation', String(first + 1), { timeout: 120_000 });
  await expect(generation).toContainText('resize: +1');
  await expect(page.getByTestId('membership-agent')).toHaveCount(2);
  await expect(page.getByTestId('membership-counts')).toContainText('2 training · 0 waiting · 0 lost');
  await expect(page.getByTestId('vnode-row')).toHaveCount(2);
  await expect(page.getByTestId('vnode-row').nth(1)).toContainText('1 / 2');
  await expect(page.getByTestId('loss-chart')).toHaveAttribute('data-markers', '1');
  await expect(page.getByTestId('throughput-chart')).toHaveAttribute('data-markers', '1');
  await expect(page.getByTestId('loss-chart-markers')).toContainText(`generation ${first + 1}: resize: +1`);
  await expect(page.getByTestId('log')).toContainText(`Generation ${first + 1} from step`);
  // Training goes on after the resize.
  const points = Number(await page.getByTestId('loss-chart').getAttribute('data-points'));
  await expect.poll(async () => Number(await page.getByTestId('loss-chart').getAttribute('data-points')), { timeout: 60_000 }).toBeGreaterThan(points);
  await page.screenshot({ path: 'test-results/resize.png', fullPage: true });

  await page.getByTestId('stop-button').click();
  await expect(page.getByTestId('status')).toContainText('Stopped', { timeout: 60_000 });
  await expect(add).toBeDisabled();
  await expect(page.getByTestId('resize-why')).toContainText('not running');
  expect(problems).toEqual([]);
});
