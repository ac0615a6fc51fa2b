import { _electron as electron, expect, test } from '@playwright/test';
import { probeElectron } from '../../electron/electronProbe';

/**
 * The Electron shell, driven by Playwright. Where the Electron binary or a display is missing (as on
 * the CI machines, which cannot download Electron) the test reports itself as skipped with the reason;
 * it never passes without having run.
 */
test('the Electron shell opens the studio with a secure window and lists the zoo', async () => {
  const probe = probeElectron({ download: false });
  if (!probe.ok) {
    test.skip(true, probe.binaryMissing ? `Electron binary not installed: ${probe.detail}` : `Electron cannot run here: ${probe.reason}`);
    return;
  }
  const app = await electron.launch({ executablePath: probe.binary, args: ['dist/electron/main.cjs'], cwd: process.cwd() });
  try {
    const page = await app.firstWindow();
    await expect(page.getByTestId('status')).toContainText('Ready', { timeout: 30_000 });
    await page.getByTestId('model-picker').selectOption('mlp');
    await page.getByTestId('preset-picker').selectOption('pp2-dp2');
    await expect(page.getByTestId('graph-node')).toHaveCount(4);
    await expect(page.getByTestId('stage-badge')).toHaveCount(2);
    // The page has the bridge and nothing of Node.
    const surface = await page.evaluate(() => ({
      bridge: typeof (globalThis as { shoal?: { call?: unknown } }).shoal?.call,
      require: typeof (globalThis as { require?: unknown }).require,
      process: typeof (globalThis as { process?: unknown }).process,
    }));
    expect(surface).toEqual({ bridge: 'function', require: 'undefined', process: 'undefined' });
    // Navigation away and new windows are refused. window.open answers null at once when the main
    // process denies it; for the navigation, wait until the main process has seen (and refused) it.
    const url = page.url();
    await app.evaluate(({ BrowserWindow }) => {
      const seen: string[] = [];
      (globalThis as { navigationsSeen?: string[] }).navigationsSeen = seen;
      BrowserWindow.getAllWindows()[0].webContents.on('will-navigate', (_event, to) => seen.push(to));
    });
    expect(await page.evaluate(() => window.open('https://example.com') === null)).toBe(true);
    await page.evaluate(() => {
      window.location.href = 'https://example.com';
    });
    await expect.poll(() => app.evaluate(() => (globalThis as { navigationsSeen?: string[] }).navigationsSeen?.length)).toBe(1);
    expect(page.url()).toBe(url);
    expect(app.windows()).toHaveLength(1);
  } finally {
    await app.close();
  }
});
