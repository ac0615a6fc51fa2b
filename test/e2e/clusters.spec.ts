import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import { makeUserKey, startSshd, stopAllSshd, type PrivateSshd } from '../support/sshd';
import { launchIsolatedStudio } from './isolatedStudio';

/**
 * The Cluster view against a real OpenSSH server (a private sshd on 127.0.0.2): add a host, test the
 * connection, answer the trust-on-first-use dialog with the fingerprint sshd's key has, see preflight.
 */
const home = mkdtempSync(join(tmpdir(), 'shoal-e2e-home-'));
let sshd: PrivateSshd;
test.afterAll(async () => {
  await stopAllSshd();
  rmSync(home, { recursive: true, force: true });
});

test('adds a host, trusts its key by fingerprint in the dialog, and shows its preflight', async ({ page }) => {
  mkdirSync(join(home, '.ssh'), { recursive: true, mode: 0o700 });
  const key = makeUserKey(join(home, '.ssh'), 'id_lab');
  sshd = await startSshd({ address: '127.0.0.2', authorizedKeys: [key.publicKey] });
  const studio = await launchIsolatedStudio({ HOME: home, SHOAL_CONFIG_DIR: join(home, 'shoal-config'), SSH_AUTH_SOCK: '', SHOAL_DATA_DIR: join(home, 'data') });
  try {
    await page.goto(studio.url);
    await expect(page.getByTestId('status')).toContainText('Ready', { timeout: 30_000 });
    await page.getByTestId('open-clusters').click();
    const view = page.getByTestId('clusters-view');
    await expect(view.getByTestId('clusters-empty')).toContainText('No SSH clusters yet');

    await view.getByTestId('add-cluster-name').fill('lab');
    await view.getByTestId('add-hosts').fill(`${sshd.user}@127.0.0.2:${sshd.port}`);
    await view.getByTestId('add-identity').fill(key.path);
    await view.getByTestId('add-hosts-submit').click();
    await expect(view.getByTestId('cluster-item')).toContainText('lab');
    await expect(view.getByTestId('cluster-host')).toContainText(`127.0.0.2:${sshd.port}`);

    await view.getByTestId('test-cluster').click();
    const dialog = page.getByTestId('trust-dialog');
    await expect(dialog.getByTestId('trust-fingerprint')).toHaveText(`ssh-ed25519 ${sshd.hostFingerprint()}`);
    await page.screenshot({ path: 'test-results/clusters-trust.png' });
    // Escape does not dismiss a host-key question.
    await page.keyboard.press('Escape');
    await expect(dialog).toBeVisible();
    await dialog.getByTestId('trust-accept').click();

    await expect(view.getByTestId('test-summary')).toHaveText('1 of 1 host ready');
    const preflight = view.getByTestId('preflight');
    await expect(preflight).toHaveAttribute('data-ok', 'true');
    await expect(preflight.locator('[data-step="hostKey"]')).toContainText('newly trusted');
    await expect(preflight.locator('[data-step="node"]')).toHaveAttribute('data-status', 'ok');
    await expect(view.getByTestId('host-facts')).toContainText('CPUs');
    await page.screenshot({ path: 'test-results/clusters-preflight.png' });

    // A second test does not ask again: the key is in Shoal's store now.
    await view.getByTestId('test-cluster').click();
    await expect(view.getByTestId('test-summary')).toHaveText('1 of 1 host ready');
    await expect(page.getByTestId('trust-dialog')).toHaveCount(0);
    await expect(preflight.locator('[data-step="hostKey"]')).not.toContainText('newly trusted');
  } finally {
    await studio.close();
  }
});
