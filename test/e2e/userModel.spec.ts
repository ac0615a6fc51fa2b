import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import { launchIsolatedStudio, type IsolatedStudio } from './isolatedStudio';

/**
 * A user's own model trained from the studio: model.json and weights.bin picked together with the file
 * chooser (the studio stores them for the agents), the data a NumPy folder typed in the plan panel's
 * Data section, Train on This machine, the run to its final result. A folder that does not fit the
 * model is refused before anything starts, naming the file.
 */
const root = mkdtempSync(join(tmpdir(), 'shoal-e2e-user-'));
const saved = join(root, 'saved');
const dataDir = join(root, 'data');
const badDir = join(root, 'bad');
let studio: IsolatedStudio;

test.beforeAll(async () => {
  // tfjs-layers builds and saves the model in a tsx process of its own (see userModelFiles.ts).
  execFileSync(join('node_modules', '.bin', 'tsx'), ['test/e2e/userModelFiles.ts', root], { cwd: process.cwd(), stdio: 'ignore', timeout: 120_000 });
  studio = await launchIsolatedStudio({ SHOAL_DATA_DIR: join(root, 'shoal'), XDG_CONFIG_HOME: join(root, 'config') });
});

test.afterAll(async () => {
  await studio?.close();
  rmSync(root, { recursive: true, force: true });
});

test('pick model.json with weights.bin, choose a NumPy folder, Train, see the run finish', async ({ page }) => {
  test.setTimeout(5 * 60_000);
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  await page.goto(studio.url);
  await expect(page.getByTestId('status')).toContainText('Ready', { timeout: 30_000 });
  const train = page.getByTestId('train-button');
  const why = page.getByTestId('train-why');

  // model.json alone: shown and planned, but it cannot train without the weights it names.
  await page.getByTestId('model-file-input').setInputFiles([join(saved, 'model.json')]);
  await expect(page.getByTestId('model-picker')).toHaveValue('file:model.json');
  await expect(page.getByTestId('graph').locator('[data-layer="head"]')).toBeVisible();
  await expect(why).toContainText('names the weights file weights.bin, which was not given');
  await expect(train).toBeDisabled();

  // Both files at once: stored for the agents; now the data is what is missing.
  await page.getByTestId('model-file-input').setInputFiles([join(saved, 'model.json'), join(saved, 'weights.bin')]);
  await expect(page.getByTestId('data-kind')).toHaveValue('npy');
  await expect(why).toContainText('Choose the data');

  await page.getByTestId('global-batch-input').fill('16');
  await page.getByTestId('epochs-input').fill('1');
  await page.getByTestId('data-dir').fill(badDir);
  await expect(train).toBeEnabled();
  await train.click();
  await expect(page.getByTestId('status')).toContainText(`Could not start training: ${join(badDir, 'x.npy')}: each sample has shape (4,)`);

  await page.getByTestId('data-dir').fill(dataDir);
  await page.getByTestId('validation-split').fill('0.25');
  await page.getByTestId('loss-picker').selectOption('sparse_categorical_crossentropy');
  await expect(train).toBeEnabled();
  await train.click();
  await expect(page.getByTestId('final-accuracy')).toBeVisible({ timeout: 4 * 60_000 });
  await expect(page.getByTestId('final-accuracy')).toContainText('%');
  await expect(page.getByTestId('status')).toContainText('Finished resnet_block');
  await expect(train).toBeEnabled();
  mkdirSync('test-results', { recursive: true });
  await page.screenshot({ path: 'test-results/user-model-final.png', fullPage: true });
  expect(problems).toEqual([]);
});
