import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from '@playwright/test';
import { expect, test } from '@playwright/test';
import { launchIsolatedStudio } from './isolatedStudio';
import type { IsolatedStudio } from './isolatedStudio';
import { measureLayout } from './layoutChecks';

/**
 * The studio's layout holds at the smallest and a large window, in both themes: every main view
 * (editor with its graph, the Monitor with a finished job's data, Runs, Clusters, the Data section)
 * is screenshotted into test-results/layout/ and measured — no interactive element overlaps another
 * or is cut off, no page scroll, the graph gets at least half of the window's height, and text
 * meets WCAG AA contrast. One short job is run once and reused by every view. A studio of its own
 * (own data folder) keeps the Runs view to that one job.
 */
const SIZES = [
  { width: 1024, height: 700 },
  { width: 1920, height: 1080 },
] as const;
const THEMES = ['dark', 'light'] as const;
const OUT = 'test-results/layout';

const data = mkdtempSync(join(tmpdir(), 'shoal-e2e-layout-'));
let studio: IsolatedStudio;

test.beforeAll(async () => {
  mkdirSync(OUT, { recursive: true });
  studio = await launchIsolatedStudio({ SHOAL_DATA_DIR: data, XDG_CONFIG_HOME: join(data, 'config') });
});

test.afterAll(async () => {
  await studio?.close();
  rmSync(data, { recursive: true, force: true });
});

async function setTheme(page: Page, theme: 'dark' | 'light'): Promise<void> {
  if ((await page.evaluate(() => document.documentElement.dataset.theme)) !== theme) await page.getByTestId('theme-toggle').click();
  await expect(page.locator('html')).toHaveAttribute('data-theme', theme);
}

const VIEWS: Array<{ name: string; show(page: Page): Promise<void> }> = [
  {
    name: 'editor',
    async show(page) {
      await page.getByTestId('tab-timeline').click();
      await expect(page.getByTestId('predicted-timeline')).toBeVisible();
      await expect(page.locator('.layer-node').first()).toBeVisible();
    },
  },
  {
    name: 'monitor',
    async show(page) {
      await page.getByTestId('tab-monitor').click();
      await expect(page.getByTestId('monitor-run')).toBeVisible();
      await expect(page.getByTestId('loss-chart')).toBeVisible();
    },
  },
  {
    name: 'runs',
    async show(page) {
      await page.getByTestId('open-runs').click();
      await page.getByTestId('run-row').first().click();
    },
  },
  {
    name: 'clusters',
    async show(page) {
      await page.getByTestId('open-clusters').click();
      await expect(page.getByTestId('clusters-view')).toBeVisible();
    },
  },
  {
    name: 'data',
    async show(page) {
      await page.getByTestId('data-section').scrollIntoViewIfNeeded();
      await expect(page.getByTestId('data-section')).toBeInViewport();
    },
  },
];

async function closeOverlay(page: Page): Promise<void> {
  if (await page.getByTestId('close-overlay').isVisible()) await page.getByTestId('close-overlay').click();
}

test('every main view holds at 1024×700 and 1920×1080 in both themes: no overlap, no clipping, no page scroll, graph ≥ half the height, AA contrast', async ({ page }) => {
  test.setTimeout(8 * 60_000);
  await page.setViewportSize(SIZES[1]);
  await page.goto(studio.url);
  await expect(page.getByTestId('status')).toContainText('Ready', { timeout: 30_000 });
  // One short job on the plan the studio opens with (sized to this machine's cores).
  await page.getByTestId('epochs-input').fill('0.1');
  await expect(page.getByTestId('train-button')).toBeEnabled({ timeout: 30_000 });
  await page.getByTestId('train-button').click();
  // A started job brings the Monitor forward, naming the run.
  await expect(page.getByTestId('tab-monitor')).toHaveAttribute('aria-selected', 'true');
  await expect(page.getByTestId('monitor-run')).toContainText('mlp');
  await expect(page.getByTestId('status')).toContainText('Finished', { timeout: 5 * 60_000 });
  await expect(page.getByTestId('monitor-run')).toHaveAttribute('data-job', /.+/);
  const shownJob = await page.getByTestId('monitor-run').getAttribute('data-job');
  const points = Number(await page.getByTestId('loss-chart').getAttribute('data-points'));
  expect(points).toBeGreaterThan(0);

  // A deploy that fails before any agent starts (nothing listens on port 1) leaves this run on show,
  // and says each host's error once.
  await page.getByTestId('open-clusters').click();
  await page.getByTestId('add-cluster-name').fill('unreachable');
  await page.getByTestId('add-hosts').fill('nobody@127.0.0.1:1');
  await page.getByTestId('add-hosts-submit').click();
  await expect(page.getByTestId('cluster-item')).toContainText('unreachable');
  await closeOverlay(page);
  await page.getByTestId('deploy-target').selectOption('unreachable');
  await page.getByTestId('deploy-button').click();
  await expect(page.getByTestId('deploy-progress')).toHaveAttribute('data-phase', 'failed', { timeout: 90_000 });
  const hostError = page.getByTestId('deploy-host-error');
  await expect(hostError).toHaveCount(1);
  const errorText = ((await hostError.textContent()) ?? '').trim();
  expect(errorText.length).toBeGreaterThan(10);
  const occurrences = await page.evaluate((text) => document.body.innerText.split(text).length - 1, errorText);
  expect(occurrences, `"${errorText}" shows ${occurrences} times`).toBe(1);
  await expect(page.getByTestId('status')).toContainText('failed');
  await expect(page.getByTestId('monitor-run')).toHaveAttribute('data-job', shownJob!);
  expect(Number(await page.getByTestId('loss-chart').getAttribute('data-points'))).toBe(points);
  await page.getByTestId('deploy-target').selectOption('local');

  const failures: string[] = [];
  for (const size of SIZES) {
    await page.setViewportSize(size);
    for (const theme of THEMES) {
      await setTheme(page, theme);
      for (const view of VIEWS) {
        await view.show(page);
        // Let the graph fit itself and the charts take their new size.
        await page.waitForTimeout(400);
        const where = `${view.name} ${size.width}×${size.height} ${theme}`;
        await page.screenshot({ path: `${OUT}/${view.name}-${size.width}x${size.height}-${theme}.png` });
        const report = await measureLayout(page);
        expect(report.interactive, `${where}: interactive elements measured`).toBeGreaterThan(5);
        if (report.page.scrollHeight > report.page.height || report.page.scrollWidth > report.page.width) {
          failures.push(`${where}: the page scrolls (${report.page.scrollWidth}×${report.page.scrollHeight} in ${report.page.width}×${report.page.height})`);
        }
        if (!['runs', 'clusters'].includes(view.name) && report.graphHeight < size.height / 2) failures.push(`${where}: the graph is ${report.graphHeight} px high, under half of ${size.height}`);
        failures.push(...[...report.overlaps, ...report.clipped, ...report.lowContrast].map((f) => `${where}: ${f}`));
        await closeOverlay(page);
      }
    }
  }
  expect(failures, failures.join('\n')).toEqual([]);
});

test('splitters keep their size across a reload; menus and the shortcut sheet close on Escape and outside click', async ({ page }) => {
  await page.setViewportSize({ width: 1440, height: 900 });
  await page.goto(studio.url);
  await expect(page.getByTestId('status')).toContainText(/Ready|Finished/, { timeout: 30_000 });

  // Drag the column splitter 200 px to the left: the side column grows, and stays so after a reload.
  const side = page.locator('.workspace__side');
  const before = (await side.boundingBox())!.width;
  const splitter = (await page.getByTestId('splitter-columns').boundingBox())!;
  await page.mouse.move(splitter.x + splitter.width / 2, splitter.y + splitter.height / 2);
  await page.mouse.down();
  await page.mouse.move(splitter.x - 200, splitter.y + splitter.height / 2, { steps: 8 });
  await page.mouse.up();
  const after = (await side.boundingBox())!.width;
  expect(after).toBeGreaterThan(before + 150);
  // The graph cannot be squeezed under half of the window's height.
  const rows = (await page.getByTestId('splitter-rows').boundingBox())!;
  await page.mouse.move(rows.x + rows.width / 2, rows.y + rows.height / 2);
  await page.mouse.down();
  await page.mouse.move(rows.x + rows.width / 2, 80, { steps: 8 });
  await page.mouse.up();
  expect((await page.locator('.graph').boundingBox())!.height).toBeGreaterThanOrEqual(450);
  await page.reload();
  await expect(page.getByTestId('status')).toContainText(/Ready|Finished/, { timeout: 30_000 });
  expect(Math.abs((await side.boundingBox())!.width - after)).toBeLessThan(4);

  // The Recent menu: Escape closes it, and so does a click outside it.
  await page.getByTestId('recent-projects').click();
  await expect(page.getByTestId('recent-menu')).toBeVisible();
  await page.keyboard.press('Escape');
  await expect(page.getByTestId('recent-menu')).toHaveCount(0);
  await page.getByTestId('recent-projects').click();
  await expect(page.getByTestId('recent-menu')).toBeVisible();
  await page.locator('.graph').click({ position: { x: 200, y: 200 } });
  await expect(page.getByTestId('recent-menu')).toHaveCount(0);

  // "?" shows every shortcut of the editor; Escape closes the sheet, as does a click beside it.
  await page.locator('body').press('?');
  const sheet = page.getByTestId('shortcut-sheet');
  await expect(sheet).toBeVisible();
  for (const key of ['Ctrl+Z', 'Ctrl+Shift+Z', 'Shift+F10', 'Ctrl+S']) await expect(sheet).toContainText(key);
  await expect(sheet).toContainText('Split the stage');
  await page.screenshot({ path: `${OUT}/shortcuts.png` });
  await page.keyboard.press('Escape');
  await expect(sheet).toHaveCount(0);
  await page.getByTestId('show-shortcuts').click();
  await expect(sheet).toBeVisible();
  await page.mouse.click(10, 450);
  await expect(sheet).toHaveCount(0);
  // Typed into a field, "?" is a character, not the sheet.
  await page.getByTestId('epochs-input').press('?');
  await expect(sheet).toHaveCount(0);

  // Button states read differently in both themes: the primary button keeps its colour on hover
  // (not a grey that reads as disabled), keyboard focus draws an outline, disabled is neither.
  const train = page.getByTestId('train-button');
  const look = (el: Element) => {
    const style = getComputedStyle(el);
    return { bg: style.backgroundColor, outline: style.outlineStyle, border: style.borderStyle };
  };
  const saturated = (rgb: string) => {
    const [r, g, b] = (rgb.match(/\d+/g) ?? []).map(Number);
    return Math.max(r, g, b) - Math.min(r, g, b) > 60;
  };
  for (const theme of THEMES) {
    await setTheme(page, theme);
    await page.mouse.move(0, 0);
    const rest = await train.evaluate(look);
    await train.hover();
    const hover = await train.evaluate(look);
    await page.mouse.move(0, 0);
    const disabled = await page.getByTestId('stop-button').evaluate(look);
    await train.focus();
    await page.keyboard.press('Shift+Tab');
    await page.keyboard.press('Tab');
    const focused = await train.evaluate(look);
    expect(saturated(rest.bg) && saturated(hover.bg), `${theme}: primary ${rest.bg} → hover ${hover.bg}`).toBe(true);
    expect(hover.bg, theme).not.toBe(rest.bg);
    expect([disabled.bg, disabled.border], theme).not.toEqual([hover.bg, hover.border]);
    expect(focused.outline, theme).not.toBe('none');
  }

  // A plan that needs more agents than this machine has cores: the fix says it oversubscribes them, and prices it.
  const cores = Number(/(\d+) cores/.exec((await page.locator('.header__right').textContent()) ?? '')?.[1]);
  if (cores < 4) {
    await page.getByTestId('preset-picker').selectOption('pp2-dp2');
    await expect(page.getByTestId('fix-agents')).toContainText(`Use 4 agents on ${cores} cores`);
    await expect(page.getByTestId('oversubscribed')).toContainText(`oversubscribe them`);
    await expect(page.getByTestId('oversubscribed')).toContainText(/predicted .+ per step/);
  }
});
