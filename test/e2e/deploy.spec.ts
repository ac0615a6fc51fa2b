import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test, type Page } from '@playwright/test';
import { stepsPerEpoch } from '../../engine/data/dataOrder';
import { MNIST_TRAIN } from '../../engine/data/mnistSplit';
import { hostHome as makeHostHome, removeHomes, studioHome } from '../support/homes';
import { makeUserKey, startSshd, stopAllSshd } from '../support/sshd';
import { launchIsolatedStudio, type IsolatedStudio } from './isolatedStudio';

/**
 * One-click deploy on the browser shell: Deploy to "This machine" (detached processes, as on a
 * cluster), per-host progress rows, the Monitor's charts filling; then the studio is closed and started
 * again — the job went on — and "Jobs on clusters" re-attaches with the whole metric history.
 */
const { home, env } = studioHome('deploy');
/** The SSH host's own $HOME (its ~/.shoal), apart from the studio's. */
const hostHome = makeHostHome('e2e');
const EPOCHS = 2;
const TOTAL_STEPS = Math.round(EPOCHS * stepsPerEpoch(MNIST_TRAIN, 64));
let studio: IsolatedStudio | undefined;

test.afterAll(async () => {
  await studio?.close();
  await stopAllSshd();
  removeHomes([home, hostHome]);
});

const points = (page: Page) => async () => Number(await page.getByTestId('loss-chart').getAttribute('data-points'));

test('deploys to this machine with per-host progress, then a restarted studio re-attaches and back-fills the history', async ({ page }) => {
  test.setTimeout(6 * 60_000);
  mkdirSync('test-results', { recursive: true });
  studio = await launchIsolatedStudio(env);
  await page.goto(studio.url);
  await expect(page.getByTestId('status')).toContainText('Ready', { timeout: 30_000 });
  await page.getByTestId('model-picker').selectOption('mlp');
  await page.getByTestId('preset-picker').selectOption('pp2-dp1');
  await page.getByTestId('epochs-input').fill(String(EPOCHS));
  await expect(page.getByTestId('diagnostics')).toContainText('Plan is valid');
  await expect(page.getByTestId('deployed-jobs')).toContainText('No deployed jobs yet');

  await expect(page.getByTestId('deploy-target')).toHaveValue('local');
  await page.getByTestId('deploy-button').click();
  const progress = page.getByTestId('deploy-progress');
  const host = progress.locator('[data-testid="deploy-host"][data-host="localhost"]');
  await expect(host).toHaveAttribute('data-ok', 'true', { timeout: 30_000 });
  await expect(host.locator('[data-step="ready"]')).toHaveAttribute('data-status', 'ok');
  await expect(progress).toHaveAttribute('data-phase', 'following');
  const jobId = await progress.getAttribute('data-job');
  expect(jobId).toMatch(/^job-\d{14}-[0-9a-f]{6}$/);

  // The Monitor follows the deployed job as it does a local one.
  await expect.poll(points(page), { timeout: 2 * 60_000, intervals: [500] }).toBeGreaterThan(5);
  await expect(page.getByTestId('stop-button')).toBeEnabled();
  await page.screenshot({ path: 'test-results/deploy-progress.png', fullPage: true });
  const before = await points(page)();
  expect(before).toBeLessThan(TOTAL_STEPS);

  // A reload of the page (the studio goes on) brings the job and its host rows back.
  await page.reload();
  // Connected again: the job may already be re-attached (Training) or even over (Finished) by now.
  await expect(page.getByTestId('status')).toContainText(/Ready|Training|Finished/, { timeout: 30_000 });
  await expect(progress).toHaveAttribute('data-job', jobId!, { timeout: 30_000 });
  await expect(host.locator('[data-step="ready"]')).toHaveAttribute('data-status', 'ok');
  await expect(progress).toHaveAttribute('data-phase', 'following');
  await expect.poll(points(page), { timeout: 60_000, intervals: [500] }).toBeGreaterThanOrEqual(before);

  // Restart: the studio goes, the job (detached) does not.
  await studio.close();
  studio = await launchIsolatedStudio(env);
  await page.goto(studio.url);
  await expect(page.getByTestId('status')).toContainText('Ready', { timeout: 30_000 });
  const listed = page.locator(`[data-testid="deployed-job"][data-job="${jobId}"]`);
  await expect(listed).toContainText('mlp on this machine', { timeout: 30_000 });
  expect(['running', 'finished']).toContain(await listed.getAttribute('data-state'));
  await listed.getByTestId('open-deployed-job').click();

  // The whole history, from the first step, then live to the end.
  await expect.poll(points(page), { timeout: 3 * 60_000, intervals: [500] }).toBeGreaterThan(before);
  await expect(page.getByTestId('final-accuracy')).toBeVisible({ timeout: 3 * 60_000 });
  expect(await points(page)()).toBe(TOTAL_STEPS);
  await expect(listed.getByTestId('open-deployed-job')).toHaveText('Shown');
  await page.screenshot({ path: 'test-results/deploy-reattached.png', fullPage: true });
});

test('deploys to an SSH cluster: the unknown host key goes through the trust dialog, upload progress shows, Stop ends the job', async ({ page }) => {
  test.setTimeout(6 * 60_000);
  await studio?.close();
  mkdirSync(join(home, '.ssh'), { recursive: true, mode: 0o700 });
  const key = makeUserKey(join(home, '.ssh'), 'id_lab');
  const sshd = await startSshd({ address: '127.0.0.2', authorizedKeys: [key.publicKey], home: hostHome });
  studio = await launchIsolatedStudio(env);
  await page.goto(studio.url);
  await expect(page.getByTestId('status')).toContainText('Ready', { timeout: 30_000 });
  await page.getByTestId('model-picker').selectOption('mlp');
  await page.getByTestId('preset-picker').selectOption('pp2-dp1');
  await page.getByTestId('epochs-input').fill('20');

  await page.getByTestId('open-clusters').click();
  const view = page.getByTestId('clusters-view');
  await view.getByTestId('add-cluster-name').fill('lab');
  await view.getByTestId('add-hosts').fill(`${sshd.user}@127.0.0.2:${sshd.port}`);
  await view.getByTestId('add-identity').fill(key.path);
  await view.getByTestId('add-hosts-submit').click();
  await expect(view.getByTestId('cluster-item')).toContainText('lab');
  await view.getByTestId('close-overlay').click();

  await page.getByTestId('deploy-target').selectOption('lab');
  await page.getByTestId('deploy-button').click();
  const dialog = page.getByTestId('trust-dialog');
  await expect(dialog.getByTestId('trust-fingerprint')).toHaveText(`ssh-ed25519 ${sshd.hostFingerprint()}`, { timeout: 30_000 });
  await page.screenshot({ path: 'test-results/deploy-trust.png' });
  await dialog.getByTestId('trust-accept').click();
  await expect(page.getByTestId('trust-dialog')).toHaveCount(0);

  const host = page.getByTestId('deploy-progress').locator('[data-testid="deploy-host"][data-host="127.0.0.2"]');
  await expect(host.locator('[data-step="connect"]')).toHaveAttribute('data-status', 'ok', { timeout: 60_000 });
  await expect(host).toHaveAttribute('data-ok', 'true', { timeout: 2 * 60_000 });
  await expect(host.locator('[data-step="upload"]')).toContainText('uploaded to ~/.shoal/agent/');
  await expect(host.locator('[data-step="ready"]')).toHaveAttribute('data-status', 'ok');
  await expect.poll(points(page), { timeout: 2 * 60_000, intervals: [500] }).toBeGreaterThan(3);
  await page.screenshot({ path: 'test-results/deploy-ssh.png', fullPage: true });

  await page.getByTestId('stop-button').click();
  await expect(page.getByTestId('train-button')).toHaveText('Train', { timeout: 60_000 });
  const jobId = await page.getByTestId('deploy-progress').getAttribute('data-job');
  await page.getByTestId('refresh-deployed-jobs').click();
  await expect(page.locator(`[data-testid="deployed-job"][data-job="${jobId}"]`)).toHaveAttribute('data-state', 'stopped', { timeout: 60_000 });
});
