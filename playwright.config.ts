import { defineConfig } from '@playwright/test';

/**
 * End-to-end tests drive the browser shell in Debian's Chromium (Playwright's own browser download is
 * not available here). The global setup builds the app once; `SHOAL_E2E_NO_BUILD=1` skips that when
 * dist/ and renderer/dist/ are already current.
 */
const chromium = process.env.SHOAL_CHROMIUM ?? '/usr/bin/chromium';

export default defineConfig({
  testDir: 'test/e2e',
  globalSetup: './test/e2e/globalSetup.ts',
  timeout: 8 * 60_000,
  expect: { timeout: 15_000 },
  workers: 1,
  fullyParallel: false,
  retries: 0,
  reporter: [['list']],
  outputDir: 'test-results/playwright',
  use: {
    browserName: 'chromium',
    viewport: { width: 1440, height: 900 },
    trace: 'retain-on-failure',
    screenshot: 'only-on-failure',
    launchOptions: {
      executablePath: chromium,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    },
  },
});
