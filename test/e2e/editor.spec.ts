import { mkdirSync } from 'node:fs';
import type { Page } from '@playwright/test';
import { expect, test } from './studioFixture';

/**
 * The stage editor in a browser: move layers between stages by keyboard, context menu and drag and
 * drop, undo and redo, per-stage degrees and plan settings, the prediction and diagnostics following
 * every edit, the predicted timeline, the auto-planner, and a plan that does not fit in memory.
 */
const layer = (page: Page, id: string) => page.getByTestId('graph').locator(`[data-layer="${id}"]`);
const stageBox = (page: Page, s: number) => page.getByTestId('graph').locator(`[data-testid="stage-box"][data-stage="${s}"]`);

async function openMlp(page: Page, url: string): Promise<void> {
  await page.goto(url);
  await expect(page.getByTestId('status')).toContainText('Ready', { timeout: 30_000 });
  await page.getByTestId('model-picker').selectOption('mlp');
  await page.getByTestId('preset-picker').selectOption('pp2-dp1');
  await page.getByTestId('agents-input').fill('2');
  await expect(page.getByTestId('graph').getByTestId('stage-badge')).toHaveCount(2);
  // pp2-dp1 balances mlp as [input, dense_1] | [dense_2, logits].
  await expect(layer(page, 'dense_2')).toHaveAttribute('data-stage', '1');
  await expect(page.getByTestId('diagnostics')).toContainText('Plan is valid');
}

test('edit the plan on the graph and see the prediction follow', async ({ page, studio }) => {
  test.setTimeout(3 * 60_000);
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(`console error: ${message.text()}`);
  });
  await openMlp(page, studio.url);
  const time0 = page.getByTestId('stage-time-0');
  const before = await time0.textContent();

  // Keyboard: select dense_2 (the head of stage 1) and press [ to move it into stage 0.
  await layer(page, 'dense_2').click();
  await expect(layer(page, 'dense_2')).toHaveAttribute('aria-selected', 'true');
  await page.keyboard.press('[');
  await expect(layer(page, 'dense_2')).toHaveAttribute('data-stage', '0');
  await expect(time0).not.toHaveText(before ?? '');
  await expect(stageBox(page, 0).getByTestId('stage-prediction')).toBeVisible();

  // Undo restores the plan and its prediction; redo takes the edit again; the Undo button too.
  await page.keyboard.press('Control+z');
  await expect(layer(page, 'dense_2')).toHaveAttribute('data-stage', '1');
  await expect(time0).toHaveText(before ?? '');
  await page.keyboard.press('Control+Shift+z');
  await expect(layer(page, 'dense_2')).toHaveAttribute('data-stage', '0');
  await page.getByTestId('undo-button').click();
  await expect(layer(page, 'dense_2')).toHaveAttribute('data-stage', '1');

  // Context menu: right-click dense_2, "Move to stage 0".
  await layer(page, 'dense_2').click({ button: 'right' });
  await expect(page.getByTestId('layer-menu')).toBeVisible();
  await page.getByTestId('menu-move-0').click();
  await expect(layer(page, 'dense_2')).toHaveAttribute('data-stage', '0');
  await expect(time0).not.toHaveText(before ?? '');
  await page.getByTestId('undo-button').click();
  await expect(time0).toHaveText(before ?? '');

  // A move that would break the graph order is refused, with the reason.
  await layer(page, 'input').click();
  await page.keyboard.press(']');
  await expect(page.getByTestId('editor-notice')).toContainText('Only the last layers of stage 0');
  await expect(layer(page, 'input')).toHaveAttribute('data-stage', '0');

  // Drag and drop: dense_1 (the tail of stage 0) onto stage 1's box.
  await layer(page, 'dense_1').dragTo(stageBox(page, 1), { force: true, targetPosition: { x: 60, y: 30 } });
  await expect(layer(page, 'dense_1')).toHaveAttribute('data-stage', '1');
  await expect(time0).not.toHaveText(before ?? '');
  await page.keyboard.press('Control+z');
  await expect(layer(page, 'dense_1')).toHaveAttribute('data-stage', '0');

  // Split and merge from the keyboard.
  await layer(page, 'logits').click();
  await page.keyboard.press('s');
  await expect(page.getByTestId('graph').getByTestId('stage-badge')).toHaveCount(3);
  await expect(page.getByTestId('stage-row')).toHaveCount(3);
  await page.keyboard.press('Control+z');
  await expect(page.getByTestId('graph').getByTestId('stage-badge')).toHaveCount(2);

  // Sharding from the context menu: without a tensor-parallel degree it is a warning on the layer.
  await layer(page, 'dense_2').click({ button: 'right' });
  await page.getByTestId('menu-shard-column').click();
  await expect(layer(page, 'dense_2').getByTestId('layer-sharding')).toHaveText('S(1)');
  await expect(layer(page, 'dense_2').getByTestId('node-issue')).toHaveAttribute('data-severity', 'warning');
  await expect(page.locator('[data-code="sharding-without-tensor-degree"]')).toBeVisible();
  await page.keyboard.press('Control+z');
  await expect(layer(page, 'dense_2').getByTestId('layer-sharding')).toHaveCount(0);

  // Data parallel 2 on stage 0: priced on 3 agents, with the diagnostics inline and in the list.
  const step = await page.getByTestId('predicted-step').textContent();
  await page.getByTestId('stage-dp-0').fill('2');
  await expect(page.locator('[data-code="unequal-data-parallel"]')).toBeVisible();
  await expect(page.locator('[data-code="too-few-agents"]')).toBeVisible();
  await expect(stageBox(page, 1).getByTestId('stage-issue')).toBeVisible();
  await expect(page.getByTestId('predicted-step')).not.toHaveText(step ?? '');
  await expect(page.getByTestId('train-button')).toBeDisabled();
  await expect(page.getByTestId('train-why')).toContainText('Fix the plan first');
  await page.getByTestId('stage-dp-1').fill('2');
  await page.getByTestId('fix-agents').click();
  await expect(page.getByTestId('agents-input')).toHaveValue('4');
  await expect(page.getByTestId('diagnostics')).toContainText('Plan is valid');
  await expect(page.getByTestId('train-button')).toBeEnabled();

  // 1F1B: the predicted timeline has a row and compute bars for every stage.
  await page.getByTestId('schedule-picker').selectOption('1f1b');
  const timeline = page.getByTestId('predicted-timeline');
  await expect(timeline).toContainText('1f1b');
  await expect(timeline.getByTestId('timeline-row')).toHaveCount(2);
  for (const s of [0, 1]) {
    for (const kind of ['forward', 'backward', 'optimizer']) {
      expect(await timeline.locator(`[data-testid="timeline-bar"][data-stage="${s}"][data-kind="${kind}"]`).count(), `stage ${s} ${kind}`).toBeGreaterThan(0);
    }
  }
  await timeline.locator('[data-testid="timeline-bar"][data-kind="backward"]').first().hover();
  await expect(page.getByTestId('timeline-readout')).toContainText('micro-batch');

  // Auto-plan: hover previews a suggestion on the graph, Apply loads it into the editor.
  const suggestion = page.getByTestId('suggestion').first();
  await expect(suggestion).toBeVisible({ timeout: 60_000 });
  await suggestion.hover();
  await expect(page.getByTestId('graph-preview')).toBeVisible();
  await suggestion.getByTestId('apply-suggestion').click();
  await expect(page.getByTestId('plan-source')).toContainText('auto-plan #1');
  await expect(page.getByTestId('graph-preview')).toHaveCount(0);

  mkdirSync('test-results', { recursive: true });
  await page.mouse.move(5, 5);
  await page.getByTestId('undo-button').click();
  await layer(page, 'dense_2').click();
  await page.screenshot({ path: 'test-results/editor.png' });
  expect(problems, 'the page logged no errors').toEqual([]);
});

test('a plan that does not fit in memory is shown in red', async ({ page, studio }) => {
  test.setTimeout(2 * 60_000);
  await openMlp(page, studio.url);
  await page.getByTestId('model-picker').selectOption('gpt2-xl');
  await expect(page.getByTestId('graph').getByTestId('stage-badge')).toHaveCount(2, { timeout: 30_000 });
  await expect(page.getByTestId('predicted-memory')).toHaveAttribute('data-fits', 'false');
  await expect(page.getByTestId('predicted-memory')).toContainText('out of memory');
  await expect(page.getByTestId('graph').locator('[data-testid="stage-memory"][data-fits="false"]').first()).toBeVisible();
  await expect(page.getByTestId('stage-memory-0')).toHaveClass(/stage-table__over/);
  await expect(page.locator('[data-code="out-of-memory"]').first()).toBeVisible();
  await expect(page.getByTestId('graph').getByTestId('stage-issue').first()).toContainText('needs');
  // On this machine no plan fits; a V100 cluster has room.
  await expect(page.getByTestId('autoplan-empty')).toBeVisible({ timeout: 60_000 });
  await page.getByTestId('cluster-picker').selectOption('whale-64xv100');
  await expect(page.getByTestId('suggestion').first()).toBeVisible({ timeout: 90_000 });
  await expect(page.getByTestId('train-button')).toBeDisabled();
  await page.screenshot({ path: 'test-results/editor-oom.png' });
});
