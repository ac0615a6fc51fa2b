import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import { launchIsolatedStudio } from './isolatedStudio';

/**
 * Runs and projects in the browser shell: past runs listed from disk (trained beforehand by the CLI
 * into a private data folder), one opened with its curves, its weights exported and downloaded, two
 * compared; a project saved with Ctrl+S, changed, and opened again with Ctrl+O; the theme toggle.
 */
const data = mkdtempSync(join(tmpdir(), 'shoal-e2e-runs-'));
const env = { SHOAL_DATA_DIR: data, XDG_CONFIG_HOME: join(data, 'config') };
test.afterAll(() => rmSync(data, { recursive: true, force: true }));

function train(preset: string, agents: number): void {
  const result = spawnSync(process.execPath, ['bin/shoal.cjs', 'train', '--model', 'mlp', '--cluster', `local:${agents}`, '--plan', preset, '--steps', '10', '--json'], {
    cwd: process.cwd(),
    env: { ...process.env, ...env },
    encoding: 'utf8',
    timeout: 180_000,
  });
  if (result.status !== 0) throw new Error(`shoal train failed: ${result.stderr}`);
}

/** WCAG contrast ratio of two computed CSS colours (rgb(), rgba() or color(srgb …) as Chromium reports them). */
function contrast(a: string, b: string): number {
  const channels = (c: string) => {
    const n = c.match(/[\d.]+/g)!.map(Number);
    return c.startsWith('color(') ? n.slice(0, 3) : n.slice(0, 3).map((v) => v / 255);
  };
  const luminance = (c: string) => {
    const [r, g, bl] = channels(c).map((v) => (v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4));
    return 0.2126 * r + 0.7152 * g + 0.0722 * bl;
  };
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
  return (hi + 0.05) / (lo + 0.05);
}

test('an empty history tells a new user what to do', async ({ page }) => {
  const empty = mkdtempSync(join(tmpdir(), 'shoal-e2e-empty-'));
  const studio = await launchIsolatedStudio({ SHOAL_DATA_DIR: empty });
  try {
    await page.goto(studio.url);
    await expect(page.getByTestId('status')).toContainText('Ready', { timeout: 30_000 });
    await page.getByTestId('open-runs').click();
    await expect(page.getByTestId('runs-empty')).toContainText('press Train');
    await page.keyboard.press('Escape');
    await expect(page.getByTestId('runs-view')).toHaveCount(0);
    await page.getByTestId('open-clusters').click();
    await expect(page.getByTestId('clusters-view')).toBeVisible();
    await page.getByTestId('close-overlay').click();
  } finally {
    await studio.close();
    rmSync(empty, { recursive: true, force: true });
  }
});

test('lists past runs, opens one, exports its weights and compares two', async ({ page }) => {
  test.setTimeout(5 * 60_000);
  train('pp1-dp1', 1);
  train('pp2-dp1', 2);
  const studio = await launchIsolatedStudio(env);
  try {
    await page.goto(studio.url);
    await expect(page.getByTestId('status')).toContainText('Ready', { timeout: 30_000 });
    await page.getByTestId('open-runs').click();
    const rows = page.getByTestId('run-row');
    await expect(rows).toHaveCount(2);
    await expect(rows.first()).toContainText('finished');

    // The newest run (pp2-dp1) first: open it.
    await rows.first().click();
    const detail = page.getByTestId('run-detail');
    await expect(detail).toContainText('2 stages × 1 replica');
    await expect(detail.getByTestId('run-loss')).toHaveAttribute('data-points', '10');
    await expect(detail.getByTestId('measured-step-ms')).toContainText(/^\d[\d.,]* (µs|ms|s)$/);
    // Its validation: loss, accuracy, the data it trained on, and the digits' confusion matrix over all
    // 2,000 validation samples with per-class accuracy, readable in both themes.
    await expect(detail.getByTestId('validation-loss')).toHaveText(/^\d+\.\d{4}$/);
    await expect(detail.getByTestId('validation-accuracy')).toHaveText(/^\d+\.\d{2}%$/);
    await expect(detail.getByTestId('run-dataset')).toContainText('mnist: 8,000 training / 2,000 validation samples');
    const matrix = detail.getByTestId('confusion-matrix');
    await expect(matrix).toHaveAttribute('data-classes', '10');
    await expect(matrix).toHaveAttribute('data-total', '2000');
    await expect(matrix.getByTestId('confusion-row')).toHaveCount(10);
    await expect(matrix.getByTestId('class-accuracy')).toHaveCount(10);
    const counts = await matrix.locator('tbody td[data-share]').allTextContents();
    expect(counts).toHaveLength(100);
    expect(counts.reduce((a, c) => a + Number(c), 0)).toBe(2000);
    for (const theme of ['light', 'dark']) {
      await page.evaluate((t) => (document.documentElement.dataset.theme = t), theme);
      const cell = matrix.locator('td.confusion__diagonal').first();
      const colours = await cell.evaluate((el) => [getComputedStyle(el).color, getComputedStyle(el).backgroundColor]);
      expect(contrast(colours[0], colours[1]), `${theme} theme: ${colours.join(' on ')}`).toBeGreaterThan(3);
    }
    await detail.getByTestId('export-weights').click();
    await expect(detail.getByTestId('export-result')).toContainText('tfjs-model');
    const downloads: string[] = [];
    page.on('download', (d) => downloads.push(d.suggestedFilename()));
    await detail.getByTestId('download-weights').click();
    await expect.poll(() => downloads.sort()).toEqual(['group1-shard1of1.bin', 'model.json']);
    mkdirSync('test-results', { recursive: true });
    await page.screenshot({ path: 'test-results/runs-detail.png' });

    // Tick both: curves overlaid, the plan difference, predicted vs measured for each.
    for (const checkbox of await page.getByRole('checkbox', { name: /^Compare / }).all()) await checkbox.check();
    const compare = page.getByTestId('run-compare');
    await expect(compare.getByTestId('compare-loss')).toHaveAttribute('data-series', '2');
    await expect(compare.getByTestId('compare-loss')).toHaveAttribute('data-points', '10,10');
    await expect(compare.getByTestId('plan-diff')).toContainText('stages[0].layers');
    await expect(compare.getByTestId('step-time-table').locator('tbody tr')).toHaveCount(2);
    await page.screenshot({ path: 'test-results/runs-compare.png' });
  } finally {
    await studio.close();
  }
});

test('saves a project with Ctrl+S, reopens it with Ctrl+O and from Recent; the theme persists', async ({ page }) => {
  const studio = await launchIsolatedStudio(env);
  try {
    await page.goto(studio.url);
    await expect(page.getByTestId('status')).toContainText('Ready', { timeout: 30_000 });
    await page.getByTestId('model-picker').selectOption('mlp');
    await page.getByTestId('preset-picker').selectOption('pp2-dp2');
    await expect(page.getByTestId('graph').getByTestId('stage-badge')).toHaveCount(2);

    const saving = page.waitForEvent('download');
    await page.locator('body').press('Control+s');
    const saved = await saving;
    expect(saved.suggestedFilename()).toBe('mlp.shoal.json');
    const file = join(data, 'mlp.shoal.json');
    await saved.saveAs(file);
    const project = JSON.parse(readFileSync(file, 'utf8')) as { format: string; model: unknown; plan: { stages: unknown[] }; cluster: { kind: string } };
    expect(project).toMatchObject({ format: 'shoal-project', model: { kind: 'zoo', name: 'mlp' }, cluster: { kind: 'builtin', name: 'local' } });
    expect(project.plan.stages).toHaveLength(2);
    await expect(page.getByTestId('menu-notice')).toContainText('Saved mlp.shoal.json');

    // Change the design, then open the saved project again.
    await page.getByTestId('preset-picker').selectOption('pp1-dp1');
    await expect(page.getByTestId('graph').getByTestId('stage-badge')).toHaveCount(1);
    const choosing = page.waitForEvent('filechooser');
    await page.locator('body').press('Control+o');
    await (await choosing).setFiles(file);
    await expect(page.getByTestId('menu-notice')).toContainText('Opened mlp');
    await expect(page.getByTestId('graph').getByTestId('stage-badge')).toHaveCount(2);
    await expect(page.getByTestId('preset-picker')).toHaveValue('pp2-dp2');

    // A file that is not a project is refused with what to do instead.
    const notProject = join(data, 'model.json');
    spawnSync('sh', ['-c', `echo '{"modelTopology": {}}' > ${notProject}`]);
    const choosingAgain = page.waitForEvent('filechooser');
    await page.getByTestId('open-project').click();
    await (await choosingAgain).setFiles(notProject);
    await expect(page.getByTestId('menu-notice')).toContainText('not a Shoal project');

    // Recent projects survive a reload (localStorage), and so does the theme.
    // The first theme follows the system's preference (Playwright's Chromium prefers light); the toggle switches it.
    await page.emulateMedia({ colorScheme: 'dark' });
    const initial = await page.locator('html').getAttribute('data-theme');
    const other = initial === 'light' ? 'dark' : 'light';
    await page.getByTestId('theme-toggle').click();
    await expect(page.locator('html')).toHaveAttribute('data-theme', other);
    if (other === 'dark') {
      await page.getByTestId('theme-toggle').click();
      await expect(page.locator('html')).toHaveAttribute('data-theme', 'light');
    }
    await page.screenshot({ path: 'test-results/studio-light.png' });
    await page.reload();
    await page.goto(studio.url);
    await expect(page.getByTestId('status')).toContainText('Ready', { timeout: 30_000 });
    await expect(page.locator('html')).toHaveAttribute('data-theme', 'light');
    await page.getByTestId('preset-picker').selectOption('pp1-dp1');
    await page.getByTestId('recent-projects').click();
    await page.getByRole('menuitem', { name: /mlp/ }).click();
    await expect(page.getByTestId('graph').getByTestId('stage-badge')).toHaveCount(2);
  } finally {
    await studio.close();
  }
});
