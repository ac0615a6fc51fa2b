import type { Page } from '@playwright/test';
import { syntheticKerasModel } from '../../bench/lib/syntheticKeras';
import { expect, test } from './studioFixture';

/**
 * The model view: open a Keras / tfjs model.json with the file picker and by dropping it on the window,
 * a malformed file explained (what, where, what to do) without losing the open model, search a layer
 * (Ctrl+F, Enter for the next match) and see it focused, and the minimap on a big graph.
 */
const graph = (page: Page) => page.getByTestId('graph');
const layer = (page: Page, id: string) => graph(page).locator(`[data-layer="${id}"]`);

async function ready(page: Page, url: string): Promise<void> {
  await page.goto(url);
  await expect(page.getByTestId('status')).toContainText('Ready', { timeout: 30_000 });
  await expect(layer(page, 'dense_1')).toBeVisible();
}

/** Drop files on the window the way the browser does: dragenter, dragover, drop with a DataTransfer. */
async function dropFile(page: Page, name: string, text: string): Promise<void> {
  await page.evaluate(
    ([fileName, content]) => {
      const data = new DataTransfer();
      data.items.add(new File([content], fileName, { type: 'application/json' }));
      const target = document.querySelector('[data-testid="graph"]')!;
      for (const type of ['dragenter', 'dragover', 'drop']) target.dispatchEvent(new DragEvent(type, { bubbles: true, cancelable: true, dataTransfer: data }));
    },
    [name, text] as const,
  );
}

test('open a model.json by the file picker and by drop; a malformed file is explained', async ({ page, studio }) => {
  test.setTimeout(3 * 60_000);
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  await ready(page, studio.url);

  // The file picker: a 12-layer Sequential opens with its layers and a plan on them.
  await page.getByTestId('model-file-input').setInputFiles({ name: 'small.json', mimeType: 'application/json', buffer: Buffer.from(syntheticKerasModel(12, 'small')) });
  await expect(page.getByTestId('imported-model')).toContainText('12 layers');
  await expect(page.getByTestId('model-picker')).toHaveValue('file:small.json');
  await expect(graph(page).getByTestId('graph-node')).toHaveCount(12);
  await expect(layer(page, 'logits')).toBeVisible();
  await expect(graph(page).getByTestId('stage-badge').first()).toBeVisible();

  // A malformed file: the error says what, where and what to do, and the open model stays.
  await page.getByTestId('model-file-input').setInputFiles({ name: 'broken.json', mimeType: 'application/json', buffer: Buffer.from('{\n  "modelTopology": {\n    "class_name": "Sequential",,\n') });
  const error = page.getByTestId('model-file-error');
  await expect(error).toContainText('not valid JSON');
  await expect(error).toContainText('broken.json, line 3');
  await expect(error).toContainText('What to do');
  await expect(layer(page, 'logits')).toBeVisible();
  await expect(page.getByTestId('model-picker')).toHaveValue('file:small.json');

  // Drop: another model replaces it and the error goes.
  await dropFile(page, 'dropped.json', syntheticKerasModel(7, 'dropped'));
  await expect(page.getByTestId('model-picker')).toHaveValue('file:dropped.json');
  await expect(graph(page).getByTestId('graph-node')).toHaveCount(7);
  await expect(error).toHaveCount(0);

  // JSON that is not a model, dropped: explained too.
  await dropFile(page, 'package.json', '{"name": "x"}');
  await expect(error).toContainText('not a Keras or tfjs-layers model');
  await expect(error).toContainText('package.json');

  // Back to the zoo and to the imported model through the picker.
  await page.getByTestId('model-picker').selectOption('mlp');
  await expect(layer(page, 'dense_2')).toBeVisible();
  await page.getByTestId('model-picker').selectOption('file:dropped.json');
  await expect(graph(page).getByTestId('graph-node')).toHaveCount(7);
  expect(problems).toEqual([]);
});

test('search a layer on a big graph, see it focused; the minimap is there', async ({ page, studio }) => {
  test.setTimeout(3 * 60_000);
  await ready(page, studio.url);
  await page.getByTestId('model-file-input').setInputFiles({ name: 'deep.json', mimeType: 'application/json', buffer: Buffer.from(syntheticKerasModel(150, 'deep')) });
  await expect(page.getByTestId('imported-model')).toContainText('150 layers');
  await expect(graph(page).locator('.react-flow__minimap')).toBeVisible();

  // Ctrl+F opens the search; a layer by name is focused: highlighted, zoomed to a readable size, centred.
  const canvas = (await graph(page).locator('.react-flow').boundingBox())!;
  expect((await layer(page, 'dense_40').boundingBox())!.width).toBeLessThan(150);
  await graph(page).locator('.react-flow__pane').click({ position: { x: 5, y: 5 } });
  await page.keyboard.press('Control+f');
  const input = page.getByTestId('graph-search-input');
  await expect(input).toBeFocused();
  await input.fill('dense_40');
  await expect(page.getByTestId('graph-search-count')).toHaveText('1 / 1');
  const target = layer(page, 'dense_40');
  await expect(target).toHaveAttribute('data-found', 'current');
  await expect(target).toBeInViewport();
  await expect.poll(async () => (await target.boundingBox())!.width).toBeGreaterThan(150);
  await expect
    .poll(async () => {
      const box = (await target.boundingBox())!;
      return Math.abs(box.x + box.width / 2 - (canvas.x + canvas.width / 2)) < canvas.width / 4 && Math.abs(box.y + box.height / 2 - (canvas.y + canvas.height / 2)) < canvas.height / 4;
    })
    .toBe(true);

  // By kind: several matches; Enter steps to the next one and focuses it.
  await input.fill('dropout');
  await expect(page.getByTestId('graph-search-count')).toHaveText(/^1 \/ \d+$/);
  await expect(layer(page, 'dropout_1')).toHaveAttribute('data-found', 'current');
  await input.press('Enter');
  await expect(page.getByTestId('graph-search-count')).toHaveText(/^2 \/ \d+$/);
  await expect(layer(page, 'dropout_2')).toHaveAttribute('data-found', 'current');
  await expect(layer(page, 'dropout_1')).toHaveAttribute('data-found', 'match');
  await input.press('Shift+Enter');
  await expect(layer(page, 'dropout_1')).toHaveAttribute('data-found', 'current');

  // Escape closes the search and the highlight goes.
  await input.press('Escape');
  await expect(input).toHaveCount(0);
  await expect(graph(page).locator('[data-found]')).toHaveCount(0);
});
