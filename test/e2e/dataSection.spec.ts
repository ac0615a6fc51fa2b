import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test, type Page } from '@playwright/test';
import { launchIsolatedStudio, type IsolatedStudio } from './isolatedStudio';

/**
 * The plan panel's Data section on a user's own data: a folder of PNG class folders typed as a path
 * (counts, classes, thumbnails), a CSV dropped on the section (uploaded to the studio; counts, class
 * balance, the first rows), a label column that does not exist (the reader's diagnostic under that
 * field, Train held back), then Train on the CSV to its final result, and the choice saved in a
 * project and reopened. Screenshots are kept (test-results/data-section-*.png).
 */
const root = mkdtempSync(join(tmpdir(), 'shoal-e2e-data-'));
let studio: IsolatedStudio;

test.beforeAll(async () => {
  // tfjs-layers builds and saves the models in a tsx process of its own (see dataSectionFiles.ts).
  execFileSync(join('node_modules', '.bin', 'tsx'), ['test/e2e/dataSectionFiles.ts', root], { cwd: process.cwd(), stdio: 'ignore', timeout: 120_000 });
  studio = await launchIsolatedStudio({ SHOAL_DATA_DIR: join(root, 'shoal'), XDG_CONFIG_HOME: join(root, 'config') });
});

test.afterAll(async () => {
  await studio?.close();
  rmSync(root, { recursive: true, force: true });
});

async function openModel(page: Page, dir: string): Promise<void> {
  await page.getByTestId('model-file-input').setInputFiles([join(root, dir, 'model.json'), join(root, dir, 'weights.bin')]);
  await expect(page.getByTestId('model-picker')).toHaveValue('file:model.json');
}

/** Drop a file on the Data section as the browser does: dragenter, dragover, drop with a DataTransfer. */
async function dropOnDataSection(page: Page, name: string, text: string): Promise<void> {
  await page.evaluate(
    ([fileName, content]) => {
      const data = new DataTransfer();
      data.items.add(new File([content], fileName, { type: 'text/csv' }));
      const target = document.querySelector('[data-testid="data-section"]')!;
      for (const type of ['dragenter', 'dragover', 'drop']) target.dispatchEvent(new DragEvent(type, { bubbles: true, cancelable: true, dataTransfer: data }));
    },
    [name, text] as const,
  );
}

test('inspect an image folder and a dropped CSV, see a column diagnostic beside its field, train on the CSV', async ({ page }) => {
  test.setTimeout(5 * 60_000);
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  await page.goto(studio.url);
  await expect(page.getByTestId('status')).toContainText('Ready', { timeout: 30_000 });
  mkdirSync('test-results', { recursive: true });
  const section = page.getByTestId('data-section');

  // An image folder, typed: detected, counted per class, thumbnails.
  await openModel(page, 'image');
  await page.getByTestId('data-kind').selectOption('dataset');
  await page.getByTestId('dataset-source').fill(join(root, 'images'));
  await expect(page.getByTestId('dataset-counts')).toHaveText('6 training · 2 validation samples', { timeout: 30_000 });
  await expect(page.getByTestId('dataset-format')).toContainText('auto (Image class folders)');
  await expect(page.getByTestId('dataset-class')).toHaveCount(2);
  await expect(page.locator('[data-testid="dataset-class"][data-class="cat"]')).toContainText('5');
  await expect(page.locator('[data-testid="dataset-class"][data-class="dog"]')).toContainText('3');
  await expect(page.getByTestId('dataset-thumbnail')).toHaveCount(8);
  await expect(page.getByTestId('dataset-feed').first()).toHaveAttribute('data-status', 'match');
  await section.screenshot({ path: 'test-results/data-section-images.png' });

  // A CSV dropped on the section: uploaded to the studio, then inspected like a typed path.
  await openModel(page, 'table');
  await expect(page.getByTestId('data-kind')).toHaveValue('dataset');
  await page.getByTestId('loss-picker').selectOption('sparse_categorical_crossentropy');
  await dropOnDataSection(page, 'flowers.csv', readFileSync(join(root, 'flowers.csv'), 'utf8'));
  await expect(page.getByTestId('dataset-source')).toHaveValue(new RegExp(`^${join(root, 'shoal', 'datasets')}/[0-9a-f]{32}/flowers\\.csv$`), { timeout: 30_000 });
  await expect(page.getByTestId('dataset-counts')).toHaveText('48 training · 12 validation samples', { timeout: 30_000 });
  await expect(page.locator('[data-testid="dataset-class"][data-class="setosa"]')).toContainText('30');
  await expect(page.locator('[data-testid="dataset-class"][data-class="virginica"]')).toContainText('10');
  await expect(page.getByTestId('dataset-rows').locator('tbody tr')).toHaveCount(10);
  await expect(page.getByTestId('dataset-rows').locator('thead')).toContainText('species');
  // The model's window-wide drop did not take the CSV for a model.
  await expect(page.getByTestId('model-file-error')).toHaveCount(0);

  // A label column the table lacks: the reader's refusal under that field; Train says why it waits.
  await page.getByTestId('dataset-label-column').fill('species_name');
  const labelField = page.locator('.field', { has: page.getByTestId('dataset-label-column') });
  await expect(labelField.getByTestId('field-issues')).toContainText("no column 'species_name'", { timeout: 30_000 });
  await expect(page.getByTestId('train-button')).toBeDisabled();
  await expect(page.getByTestId('train-why')).toContainText("no column 'species_name'");
  await section.screenshot({ path: 'test-results/data-section-bad-column.png' });

  // The right column and a validation split: Train on the CSV to the end.
  await page.getByTestId('dataset-label-column').fill('species');
  await page.getByTestId('validation-split').fill('0.25');
  await expect(page.getByTestId('dataset-counts')).toHaveText('45 training · 15 validation samples', { timeout: 30_000 });
  await expect(labelField.getByTestId('field-issues')).toHaveCount(0);
  await page.getByTestId('global-batch-input').fill('16');
  await page.getByTestId('epochs-input').fill('1');
  await section.screenshot({ path: 'test-results/data-section-csv.png' });
  const train = page.getByTestId('train-button');
  await expect(train).toBeEnabled();
  await train.click();
  await expect(page.getByTestId('final-accuracy')).toBeVisible({ timeout: 4 * 60_000 });
  await expect(page.getByTestId('status')).toContainText('Finished flowers');
  await page.screenshot({ path: 'test-results/data-section-trained.png', fullPage: true });

  // The project keeps the dataset and its fields; reopened, they come back and are inspected again.
  const saving = page.waitForEvent('download');
  await page.locator('body').press('Control+s');
  const file = join(root, 'flowers.shoal.json');
  await (await saving).saveAs(file);
  const project = JSON.parse(readFileSync(file, 'utf8')) as { training: { data: unknown } };
  expect(project.training.data).toMatchObject({ kind: 'dataset', dataset: { format: 'csv', outputs: [{ columns: ['species'] }], validationSplit: 0.25 } });
  await page.getByTestId('data-kind').selectOption('synthetic');
  const choosing = page.waitForEvent('filechooser');
  await page.locator('body').press('Control+o');
  await (await choosing).setFiles(file);
  await expect(page.getByTestId('data-kind')).toHaveValue('dataset');
  await expect(page.getByTestId('dataset-label-column')).toHaveValue('species');
  await expect(page.getByTestId('dataset-format')).toHaveValue('csv');
  await expect(page.getByTestId('dataset-counts')).toHaveText('45 training · 15 validation samples', { timeout: 30_000 });
  expect(problems).toEqual([]);
});
