import { mkdirSync } from 'node:fs';
import type { Locator, Page } from '@playwright/test';
import { expect, test } from './studioFixture';

/**
 * The graph view as a Netron user uses it: names that tell layers apart with the full name on hover,
 * the inspector on click (a dense and a conv layer), search that unfolds the block holding a match and
 * centres it, the keyboard walking the connections, stage frames that never overlap, the minimap.
 */
const graph = (page: Page) => page.getByRole('region', { name: 'Layer graph' });
const layer = (page: Page, id: string) => graph(page).locator(`[data-layer="${id}"]`);
const shot = (page: Page, name: string) => page.screenshot({ path: `test-results/${name}.png` });

/** A BiLSTM text classifier as tfjs saves a Sequential: the importer names its input `<first>_input`. */
const BILSTM = JSON.stringify({
  format: 'layers-model',
  modelTopology: {
    class_name: 'Sequential',
    config: {
      name: 'bilstm',
      layers: [
        { class_name: 'Embedding', config: { name: 'embedding_Embedding1', input_dim: 50, output_dim: 8, batch_input_shape: [null, 12] } },
        {
          class_name: 'Bidirectional',
          config: { name: 'bidirectional_Bidirectional1', merge_mode: 'concat', layer: { class_name: 'LSTM', config: { name: 'lstm_LSTM1', units: 6, return_sequences: false, use_bias: true } } },
        },
        { class_name: 'Dense', config: { name: 'dense_Dense1', units: 3, activation: 'softmax', use_bias: true } },
      ],
    },
  },
  weightsManifest: [],
});

async function ready(page: Page, url: string): Promise<void> {
  mkdirSync('test-results', { recursive: true });
  await page.setViewportSize({ width: 1440, height: 900 });
  await page.goto(url);
  await expect(page.getByTestId('status')).toContainText('Ready', { timeout: 30_000 });
  // The studio keeps the model a previous test opened: start from the zoo's MLP.
  await page.getByTestId('model-picker').selectOption('mlp');
  await expect(layer(page, 'dense_1')).toBeVisible();
}

async function box(locator: Locator) {
  const b = await locator.boundingBox();
  if (!b) throw new Error('element has no box');
  return b;
}

/** Whether the element's centre is within a quarter of the canvas's size of the canvas's centre. */
async function centred(page: Page, target: Locator): Promise<boolean> {
  const canvas = await box(graph(page).locator('.react-flow'));
  const b = await box(target);
  return Math.abs(b.x + b.width / 2 - (canvas.x + canvas.width / 2)) < canvas.width / 4 && Math.abs(b.y + b.height / 2 - (canvas.y + canvas.height / 2)) < canvas.height / 4;
}

test('names tell layers apart, hover shows the full name, a click inspects a dense and a conv layer', async ({ page, studio }) => {
  test.setTimeout(3 * 60_000);
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  await ready(page, studio.url);
  await page.getByTestId('model-file-input').setInputFiles({ name: 'bilstm.json', mimeType: 'application/json', buffer: Buffer.from(BILSTM) });
  await expect(graph(page).getByTestId('graph-node')).toHaveCount(4);

  // The input and the embedding: different labels, each with its class.
  const input = layer(page, 'embedding_Embedding1_input');
  const embedding = layer(page, 'embedding_Embedding1');
  await expect(input.getByTestId('layer-class')).toHaveText('input');
  await expect(embedding.getByTestId('layer-class')).toHaveText('embedding');
  const [a, b] = [await input.locator('.layer-node__name').textContent(), await embedding.locator('.layer-node__name').textContent()];
  expect(a).not.toEqual(b);
  // Hover: the full name, whatever the node shows.
  await layer(page, 'bidirectional_Bidirectional1').hover();
  const tooltip = page.getByTestId('graph-tooltip');
  await expect(tooltip.getByTestId('graph-tooltip-name')).toHaveText('bidirectional_Bidirectional1');
  await input.hover();
  await expect(tooltip.getByTestId('graph-tooltip-name')).toHaveText('embedding_Embedding1_input');
  await expect(tooltip).toContainText('input');
  await shot(page, 'graph-tooltip');

  // A dense layer: class, output, weights with their shapes, FLOPs, activation bytes, stage, sharding.
  await layer(page, 'dense_Dense1').click();
  const inspector = page.getByTestId('inspector');
  await expect(inspector.getByTestId('inspector-name')).toHaveText('dense_Dense1');
  await expect(inspector.getByTestId('inspector-class')).toHaveText('dense');
  await expect(inspector.getByTestId('inspector-output')).toHaveText('3');
  await expect(inspector.getByTestId('inspector-inputs')).toContainText('bidirectional_Bidirectional1');
  await expect(inspector.getByTestId('inspector-inputs')).toContainText('12');
  await expect(inspector.locator('[data-weight="kernel"]')).toContainText('12×3');
  await expect(inspector.locator('[data-weight="bias"]')).toContainText('3');
  await expect(inspector.getByTestId('inspector-config')).toContainText('units');
  await expect(inspector.getByTestId('inspector-flops')).toContainText('forward');
  await expect(inspector.getByTestId('inspector-activation')).toContainText('B');
  await expect(inspector.getByTestId('inspector-stage')).toContainText('Stage');
  await expect(inspector.getByTestId('inspector-sharding')).toContainText('replicated');
  // The BiLSTM's weights: both directions, 4 gates of 6 units over 8 features.
  await layer(page, 'bidirectional_Bidirectional1').click();
  await expect(inspector.locator('[data-weight="forward/kernel"]')).toContainText('8×24');
  await expect(inspector.locator('[data-weight="backward/recurrent_kernel"]')).toContainText('6×24');
  await shot(page, 'graph-inspector-dense');

  // A conv layer of the zoo's CNN.
  await page.getByTestId('model-picker').selectOption('cnn');
  await expect(inspector).toHaveCount(0);
  const conv = graph(page).getByTestId('graph-node').filter({ has: page.getByTestId('layer-class').getByText('conv2d', { exact: true }) }).first();
  await conv.click();
  await expect(inspector.getByTestId('inspector-class')).toHaveText('conv2d');
  await expect(inspector.getByTestId('inspector-config')).toContainText('filters');
  await expect(inspector.getByTestId('inspector-config')).toContainText('kernelSize');
  await expect(inspector.locator('[data-weight="kernel"]')).toContainText(/\d+×\d+×\d+×\d+/);
  await expect(inspector.locator('[data-weight="bias"]')).toBeVisible();
  await expect(inspector.getByTestId('inspector-flops')).toContainText('FLOP');
  await shot(page, 'graph-inspector-conv');
  await page.keyboard.press('Escape');
  await expect(inspector).toHaveCount(0);
  expect(problems).toEqual([]);
});

test('search unfolds the block holding a match and centres it', async ({ page, studio }) => {
  test.setTimeout(3 * 60_000);
  await ready(page, studio.url);
  await page.getByTestId('model-picker').selectOption('resnet50');
  const blocks = graph(page).getByTestId('graph-block');
  await expect(blocks.first()).toBeVisible({ timeout: 30_000 });
  // A layer deep in the model, inside a folded block.
  const block = blocks.nth((await blocks.count()) - 2);
  const group = (await block.getAttribute('data-group'))!;
  const inside = (await block.getAttribute('data-layers'))!.split(' ');
  const target = inside[Math.floor(inside.length / 2)];
  await expect(layer(page, target)).toHaveCount(0);

  await page.keyboard.press('Control+f');
  await page.getByTestId('graph-search-input').fill(target);
  const found = layer(page, target);
  await expect(found).toHaveAttribute('data-found', 'current', { timeout: 30_000 });
  // Unfolded: its layers drawn one by one, the rest of the model still folded.
  await expect(graph(page).locator(`[data-testid="graph-block"][data-group="${group}"]`)).toHaveCount(0);
  for (const id of inside) await expect(layer(page, id)).toHaveCount(1);
  expect(await blocks.count()).toBeGreaterThan(3);
  await expect(found).toBeInViewport();
  await expect.poll(() => centred(page, found)).toBe(true);
  await shot(page, 'graph-search-unfolded');
});

test('the keyboard walks the connections; Enter inspects, Escape closes', async ({ page, studio }) => {
  test.setTimeout(2 * 60_000);
  await ready(page, studio.url);
  await page.getByTestId('model-picker').selectOption('cnn');
  const nodes = graph(page).getByTestId('graph-node');
  await expect(nodes.first()).toBeVisible();
  // In a chain, down is the layer fed, up the feeding one.
  const ids = await nodes.evaluateAll((els) => els.map((e) => e.getAttribute('data-layer')!));
  await layer(page, ids[0]).click();
  await page.keyboard.press('Escape');
  await expect(page.getByTestId('inspector')).toHaveCount(0);
  await expect(layer(page, ids[0])).toHaveAttribute('aria-selected', 'true');
  await page.keyboard.press('ArrowDown');
  await expect(layer(page, ids[1])).toHaveAttribute('aria-selected', 'true');
  await expect(layer(page, ids[0])).toHaveAttribute('aria-selected', 'false');
  await page.keyboard.press('ArrowDown');
  await expect(layer(page, ids[2])).toHaveAttribute('aria-selected', 'true');
  await page.keyboard.press('ArrowUp');
  await expect(layer(page, ids[1])).toHaveAttribute('aria-selected', 'true');
  // No sibling beside a chain: left and right stay.
  await page.keyboard.press('ArrowRight');
  await expect(layer(page, ids[1])).toHaveAttribute('aria-selected', 'true');
  await page.keyboard.press('Enter');
  await expect(page.getByTestId('inspector-name')).toHaveText(ids[1]);
  // The inspector follows the keyboard.
  await page.keyboard.press('ArrowDown');
  await expect(page.getByTestId('inspector-name')).toHaveText(ids[2]);
  await shot(page, 'graph-keyboard');
  await page.keyboard.press('Escape');
  await expect(page.getByTestId('inspector')).toHaveCount(0);
  await expect(layer(page, ids[2])).toHaveAttribute('aria-selected', 'true');
});

test('stages are framed top-down without overlapping; the minimap is in every view', async ({ page, studio }) => {
  test.setTimeout(3 * 60_000);
  await ready(page, studio.url);
  await expect(graph(page).locator('.react-flow__minimap')).toBeVisible();
  await page.getByTestId('model-picker').selectOption('resnet50');
  await page.getByTestId('preset-picker').selectOption('pp2-dp1');
  const frames = graph(page).getByTestId('stage-box');
  await expect(frames).toHaveCount(2, { timeout: 30_000 });
  // Two more stages: each time split the last stage before its third block.
  for (let more = 0; more < 2; more++) {
    const count = await frames.count();
    // The block may lie below the visible part of the canvas: a click event selects it as a click would.
    const block = graph(page).locator(`[data-testid="graph-block"][data-stage="${count - 1}"]`).nth(2);
    await block.dispatchEvent('click');
    await expect(block).toHaveAttribute('aria-selected', 'true');
    // Keys go to the graph (not to the preset picker that had the focus).
    await graph(page).focus();
    await page.keyboard.press('s');
    await expect(frames).toHaveCount(count + 1, { timeout: 30_000 });
  }
  await expect(frames).toHaveCount(4, { timeout: 30_000 });
  await expect(graph(page).locator('.react-flow__minimap')).toBeVisible();
  // Zoom out to see every frame; the frames are disjoint and stacked in pipeline order, each holding its layers.
  await graph(page).locator('.react-flow__controls-fitview').click();
  await page.waitForTimeout(400);
  const boxes = await frames.evaluateAll((els) => els.map((e) => ({ stage: Number(e.getAttribute('data-stage')), ...e.getBoundingClientRect().toJSON() }) as { stage: number; x: number; y: number; width: number; height: number }));
  boxes.sort((p, q) => p.stage - q.stage);
  for (const [i, p] of boxes.entries()) {
    for (const q of boxes.slice(i + 1)) {
      const apart = p.x + p.width <= q.x || q.x + q.width <= p.x || p.y + p.height <= q.y || q.y + q.height <= p.y;
      expect(apart, `stage ${p.stage} and ${q.stage} frames overlap`).toBe(true);
      expect(q.y).toBeGreaterThan(p.y);
    }
  }
  const drawn = await graph(page)
    .locator('[data-testid="graph-block"], [data-testid="graph-node"]')
    .evaluateAll((els) => els.map((e) => ({ stage: Number(e.getAttribute('data-stage')), ...e.getBoundingClientRect().toJSON() }) as { stage: number; x: number; y: number; width: number; height: number }));
  for (const n of drawn) {
    const f = boxes.find((b) => b.stage === n.stage)!;
    expect(n.x >= f.x - 1 && n.y >= f.y - 1 && n.x + n.width <= f.x + f.width + 1 && n.y + n.height <= f.y + f.height + 1, `a node of stage ${n.stage} outside its frame`).toBe(true);
  }
  await shot(page, 'graph-stages');
});

test('the canvas follows the theme; the minimap fits the window and draws a deep graph wide enough to see', async ({ page, studio }) => {
  test.setTimeout(3 * 60_000);
  await ready(page, studio.url);
  const flow = graph(page).locator('.react-flow');
  const theme = (await page.evaluate(() => document.documentElement.dataset.theme)) ?? 'dark';
  const other = theme === 'dark' ? 'light' : 'dark';
  await expect(flow).toHaveClass(new RegExp(`\\b${theme}\\b`));
  await page.getByTestId('theme-toggle').click();
  await expect(flow).toHaveClass(new RegExp(`\\b${other}\\b`));
  await page.getByTestId('theme-toggle').click();
  await expect(flow).toHaveClass(new RegExp(`\\b${theme}\\b`));

  // resnet50 folded is a column of blocks many times taller than wide.
  await page.getByTestId('model-picker').selectOption('resnet50');
  await expect(graph(page).getByTestId('graph-block').first()).toBeVisible({ timeout: 30_000 });
  const minimap = graph(page).locator('.react-flow__minimap svg');
  const sizes = [await box(minimap)];
  for (const size of [{ width: 1024, height: 700 }, { width: 1920, height: 1080 }]) {
    await page.setViewportSize(size);
    // The map follows the canvas's new size.
    await expect.poll(async () => (await box(minimap)).height).not.toBe(sizes[sizes.length - 1].height);
    const canvas = await box(flow);
    const map = await box(minimap);
    expect(map.width, 'the deep graph drawn as a hairline').toBeGreaterThanOrEqual(64);
    expect(map.width * map.height, `the minimap covers ${Math.round((100 * map.width * map.height) / (canvas.width * canvas.height))}% of the canvas`).toBeLessThan(0.1 * canvas.width * canvas.height);
    // In the canvas's bottom-right corner.
    expect(map.x + map.width).toBeGreaterThan(canvas.x + canvas.width - 40);
    expect(map.y + map.height).toBeGreaterThan(canvas.y + canvas.height - 40);
    sizes.push(map);
    await shot(page, `graph-minimap-${size.width}`);
  }
  expect(sizes[2].height).toBeGreaterThan(sizes[1].height);
});
