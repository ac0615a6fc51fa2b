import { mkdirSync } from 'node:fs';
import type { Locator, Page } from '@playwright/test';
import { expect, test } from './studioFixture';
// The type of window.__shoalBench (a global augmentation; nothing is imported at run time).
import type {} from '../../renderer/src/bench/benchHook.js';

/**
 * The Monitor's charts at 100,000 steps (the browser shell's bench hook shows a finished job with an
 * evaluation every 5,000 steps and a resize, a lost agent and a restart): smoothing shared by every
 * chart, a log y axis, drag to zoom and reset, a hover readout that the other charts follow, markers.
 */
const POINTS = 100_000;

async function showJob(page: Page, url: string): Promise<void> {
  await page.goto(url);
  await expect(page.getByTestId('status')).toContainText('Ready', { timeout: 30_000 });
  await page.waitForFunction(() => !!window.__shoalBench);
  await page.evaluate((points) => window.__shoalBench!.showJob(points), POINTS);
  // Where the Monitor is a tab of its own, open it.
  const tab = page.getByRole('tab', { name: /monitor/i });
  if (await tab.count()) await tab.first().click();
  await expect(page.getByTestId('loss-chart')).toHaveAttribute('data-points', String(POINTS));
  // Drawn (the charts draw new data in the next animation frame): the x scale reaches the last step.
  await expect(page.getByTestId('loss-chart')).toHaveAttribute('data-x-max', String(POINTS));
}

const attr = async (chart: Locator, name: string) => Number(await chart.getAttribute(name));
/** The plot area (uPlot's overlay) of a chart, scrolled into view. */
async function over(chart: Locator) {
  await chart.locator('.u-over').scrollIntoViewIfNeeded();
  return (await chart.locator('.u-over').boundingBox())!;
}
/** The x pixel of a step, on a chart showing steps xMin..xMax. */
async function stepX(chart: Locator, step: number): Promise<number> {
  const box = await over(chart);
  const [min, max] = [await attr(chart, 'data-x-min'), await attr(chart, 'data-x-max')];
  return box.x + ((step - min) / (max - min)) * box.width;
}
const readoutStep = (text: string) => Number(/step ([\d,]+)/.exec(text)?.[1].replace(/,/g, ''));

async function setSmoothing(slider: Locator, value: number): Promise<void> {
  // A range input cannot be typed into: set its value as the browser would and fire input.
  await slider.evaluate((el, v) => {
    const input = el as HTMLInputElement;
    Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value')!.set!.call(input, String(v));
    input.dispatchEvent(new Event('input', { bubbles: true }));
  }, value);
}

test('charts at 100,000 steps: markers, synced readouts, smoothing, log scale, zoom and reset', async ({ page, studio }) => {
  mkdirSync('test-results', { recursive: true });
  await showJob(page, studio.url);
  const loss = page.getByTestId('loss-chart');
  const throughput = page.getByTestId('throughput-chart');
  const accuracy = page.getByTestId('accuracy-chart');

  // Decimated per pixel column: a few points per column drawn, not 100,000.
  const box = await over(loss);
  // At most 6 points per column (first, last, and the low and high of the raw and the smoothed series);
  // the y axis may have narrowed the plot by a few columns after the data was cut.
  expect(await attr(loss, 'data-drawn')).toBeLessThanOrEqual((Math.ceil(box.width) + 20) * 6);
  expect(await attr(loss, 'data-drawn')).toBeGreaterThan(box.width);
  expect(await attr(loss, 'data-x-min')).toBe(1);
  expect(await attr(loss, 'data-x-max')).toBe(POINTS);

  // Markers: three generations (listed with their reasons) and 20 evaluations.
  await expect(loss).toHaveAttribute('data-markers', '3');
  await expect(loss).toHaveAttribute('data-evaluations', '20');
  await expect(loss.getByTestId('loss-chart-markers')).toContainText('resize: +1 agent');
  await expect(loss.getByTestId('loss-chart-markers')).toContainText('lost rank 1');
  await expect(loss.getByTestId('loss-chart-markers')).toContainText('resumed from a checkpoint');

  // Hover on the resize marker: the readout names the step, the value and the marker.
  const resizeStep = 1 + Math.floor(0.3 * (POINTS - 1));
  await page.mouse.move(await stepX(loss, resizeStep), box.y + box.height / 2);
  await expect(loss.getByTestId('loss-chart-readout')).toContainText('resize: +1 agent');
  await expect(loss.getByTestId('loss-chart-readout')).toContainText(/step [\d,]+: [\d.]+ \(raw [\d.]+\)/);
  await page.screenshot({ path: 'test-results/charts-markers.png', fullPage: true });

  // Synced cursors: the other charts read out at the same step.
  await page.mouse.move(box.x + box.width * 0.62, box.y + box.height * 0.4);
  await expect(throughput.getByTestId('throughput-chart-readout')).toContainText('step');
  const lossStep = readoutStep((await loss.getByTestId('loss-chart-readout').textContent()) ?? '');
  const rateStep = readoutStep((await throughput.getByTestId('throughput-chart-readout').textContent()) ?? '');
  const evalStep = readoutStep((await accuracy.getByTestId('accuracy-chart-readout').textContent()) ?? '');
  // Within two pixel columns of each other (each chart snaps to its nearest kept point).
  const column = POINTS / box.width;
  expect(Math.abs(lossStep - 0.62 * POINTS)).toBeLessThan(3 * column);
  expect(Math.abs(rateStep - lossStep)).toBeLessThan(3 * column);
  // Evaluations are every 5,000 steps: the nearest one.
  expect(Math.abs(evalStep - lossStep)).toBeLessThanOrEqual(2_500 + column);
  await expect(throughput.getByTestId('throughput-chart-readout')).toContainText(/samples|\d/);
  await page.screenshot({ path: 'test-results/charts-synced-cursor.png', fullPage: true });

  // Smoothing: one slider for all; 0 draws the raw series alone, 0.95 a smoothed line over a faint raw one.
  await setSmoothing(loss.getByTestId('loss-chart-smoothing'), 0);
  await expect(loss).toHaveAttribute('data-smoothing', '0');
  await expect(throughput).toHaveAttribute('data-smoothing', '0');
  await page.mouse.move(box.x + box.width * 0.5, box.y + box.height * 0.5);
  await expect(loss.getByTestId('loss-chart-readout')).not.toContainText('raw');
  await setSmoothing(throughput.getByTestId('throughput-chart-smoothing'), 0.95);
  await expect(loss).toHaveAttribute('data-smoothing', '0.95');
  await page.mouse.move(box.x + box.width * 0.5 + 3, box.y + box.height * 0.5);
  const smoothText = (await loss.getByTestId('loss-chart-readout').textContent()) ?? '';
  const [, smoothed, raw] = /: ([\d.]+) \(raw ([\d.]+)\)/.exec(smoothText) ?? [];
  expect(Number(smoothed)).toBeGreaterThan(0);
  expect(Number(smoothed)).not.toBe(Number(raw));
  await page.screenshot({ path: 'test-results/charts-smoothing.png', fullPage: true });

  // Log scale: the y axis spans whole decades.
  await loss.getByTestId('loss-chart-log').check();
  await expect(loss).toHaveAttribute('data-log', 'true');
  await expect.poll(async () => Math.log10(await attr(loss, 'data-y-min')) % 1).toBeCloseTo(0, 6);
  expect(Math.log10(await attr(loss, 'data-y-max')) % 1).toBeCloseTo(0, 6);
  await page.screenshot({ path: 'test-results/charts-log.png', fullPage: true });
  await loss.getByTestId('loss-chart-log').uncheck();
  await expect(loss).toHaveAttribute('data-log', 'false');

  // Zoom: drag from 40% to 60% of the plot; the window is drawn at full resolution; reset by button.
  const zoomBox = await over(loss);
  const reset = loss.getByTestId('loss-chart-reset');
  await expect(reset).toBeDisabled();
  const drag = async () => {
    await page.mouse.move(zoomBox.x + zoomBox.width * 0.4, zoomBox.y + zoomBox.height / 2);
    await page.mouse.down();
    await page.mouse.move(zoomBox.x + zoomBox.width * 0.5, zoomBox.y + zoomBox.height / 2, { steps: 4 });
    await page.mouse.move(zoomBox.x + zoomBox.width * 0.6, zoomBox.y + zoomBox.height / 2, { steps: 4 });
    await page.mouse.up();
    await expect(loss).toHaveAttribute('data-zoomed', 'true');
  };
  await drag();
  const [zoomMin, zoomMax] = [await attr(loss, 'data-x-min'), await attr(loss, 'data-x-max')];
  expect(Math.abs(zoomMin - 0.4 * POINTS)).toBeLessThan(2 * column);
  expect(Math.abs(zoomMax - 0.6 * POINTS)).toBeLessThan(2 * column);
  await expect(reset).toBeEnabled();
  await page.screenshot({ path: 'test-results/charts-zoom.png', fullPage: true });
  await reset.click();
  await expect(loss).toHaveAttribute('data-zoomed', 'false');
  await expect(loss).toHaveAttribute('data-x-max', String(POINTS));
  // And by double-click.
  await drag();
  await page.mouse.dblclick(zoomBox.x + zoomBox.width / 2, zoomBox.y + zoomBox.height / 2);
  await expect(loss).toHaveAttribute('data-zoomed', 'false');
  await expect(loss).toHaveAttribute('data-x-min', '1');

  await page.evaluate(() => window.__shoalBench!.clearJob());
});
