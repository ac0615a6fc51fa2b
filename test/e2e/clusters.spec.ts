import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test, type Locator, type Page } from '@playwright/test';
import { hostHome, removeHomes, studioHome } from '../support/homes';
import { makeUserKey, startSshd, stopAllSshd, type PrivateSshd } from '../support/sshd';
import { launchIsolatedStudio } from './isolatedStudio';

/**
 * The Cluster view against real OpenSSH servers (private sshd on 127.0.0.2–4): add a host, test the
 * connection, answer the trust-on-first-use dialog with the fingerprint sshd's key has, see preflight;
 * with two hosts, see the link survey's bandwidth matrix, and see it again when the view reopens.
 */
const { home, env } = studioHome('clusters');
/** Disks of the two surveyed hosts (their ~/.shoal receives the agent upload and logs). */
const hostHomes = ['a', 'b'].map(hostHome);
let sshd: PrivateSshd;
test.afterAll(async () => {
  await stopAllSshd();
  removeHomes([home, ...hostHomes]);
});

/** The browser shell with this spec's own home, config and data folders, and no ssh-agent. */
const launchStudio = () => launchIsolatedStudio(env);

/** Open the studio once it is connected, and its Cluster view. */
async function openClustersView(page: Page, url: string): Promise<Locator> {
  await page.goto(url);
  await expect(page.getByTestId('status')).toContainText('Ready', { timeout: 30_000 });
  await page.getByTestId('open-clusters').click();
  return page.getByTestId('clusters-view');
}

/** Add `hosts` (comma-separated `user@address:port`) to cluster `name` with the key at `keyPath`. */
async function addHosts(view: Locator, name: string, hosts: string, keyPath: string): Promise<void> {
  await view.getByTestId('add-cluster-name').fill(name);
  await view.getByTestId('add-hosts').fill(hosts);
  await view.getByTestId('add-identity').fill(keyPath);
  await view.getByTestId('add-hosts-submit').click();
}

test('adds a host, trusts its key by fingerprint in the dialog, and shows its preflight', async ({ page }) => {
  mkdirSync(join(home, '.ssh'), { recursive: true, mode: 0o700 });
  const key = makeUserKey(join(home, '.ssh'), 'id_lab');
  sshd = await startSshd({ address: '127.0.0.2', authorizedKeys: [key.publicKey] });
  const studio = await launchStudio();
  try {
    const view = await openClustersView(page, studio.url);
    await expect(view.getByTestId('clusters-empty')).toContainText('No SSH clusters yet');

    await addHosts(view, 'lab', `${sshd.user}@127.0.0.2:${sshd.port}`, key.path);
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

    // Preflight's clock probe may take its own 15 s on a loaded machine: wait for the test, not a fixed 15 s.
    await expect(view.getByTestId('test-summary')).toHaveText('1 of 1 host ready', { timeout: 60_000 });
    const preflight = view.getByTestId('preflight');
    await expect(preflight).toHaveAttribute('data-ok', 'true');
    await expect(preflight.locator('[data-step="hostKey"]')).toContainText('newly trusted');
    await expect(preflight.locator('[data-step="node"]')).toHaveAttribute('data-status', 'ok');
    await expect(view.getByTestId('host-facts')).toContainText('CPUs');
    await page.screenshot({ path: 'test-results/clusters-preflight.png' });

    // A second test does not ask again: the key is in Shoal's store now.
    await view.getByTestId('test-cluster').click();
    await expect(view.getByTestId('test-summary')).toHaveText('1 of 1 host ready', { timeout: 60_000 });
    await expect(page.getByTestId('trust-dialog')).toHaveCount(0);
    await expect(preflight.locator('[data-step="hostKey"]')).not.toContainText('newly trusted');
  } finally {
    await studio.close();
  }
});

test('two hosts: the link survey runs after preflight and its matrix is shown, and shown again when the view reopens', async ({ page }) => {
  const key = makeUserKey(join(home, '.ssh'), 'id_pair');
  const [a, b] = await Promise.all([3, 4].map((n, i) => startSshd({ address: `127.0.0.${n}`, authorizedKeys: [key.publicKey], home: hostHomes[i] })));
  const studio = await launchStudio();
  try {
    const view = await openClustersView(page, studio.url);
    await addHosts(view, 'pair', `${a.user}@127.0.0.3:${a.port}, ${b.user}@127.0.0.4:${b.port}`, key.path);
    await view.getByTestId('cluster-item').filter({ hasText: 'pair' }).click();
    await expect(view.getByTestId('link-matrix')).toHaveCount(0);

    await view.getByTestId('test-cluster').click();
    for (let i = 0; i < 2; i++) await page.getByTestId('trust-dialog').getByTestId('trust-accept').click();
    await expect(view.getByTestId('test-summary')).toHaveText('2 of 2 hosts ready');
    // The survey's steps show while it runs; when it is done, the matrix replaces them.
    const matrix = view.getByTestId('link-matrix');
    await expect(matrix).toBeVisible({ timeout: 120_000 });
    await expect(view.getByTestId('survey')).toHaveAttribute('data-state', 'done');
    const cell = (from: string, to: string) => matrix.locator(`[data-testid="link-cell"][data-from="${from}"][data-to="${to}"]`);
    await expect(cell('127.0.0.3', '127.0.0.4')).toContainText(/\d+(\.\d+)? [GM]B\/s/);
    await expect(cell('127.0.0.3', '127.0.0.4')).toContainText(/\d+(\.\d+)? (µs|ms)/);
    // One measurement per pair, shown in both directions.
    expect(await cell('127.0.0.4', '127.0.0.3').textContent()).toBe(await cell('127.0.0.3', '127.0.0.4').textContent());
    await expect(cell('127.0.0.3', '127.0.0.3')).toHaveText('—');
    await expect(matrix).toContainText('Measured');
    await page.screenshot({ path: 'test-results/clusters-links.png' });

    // Reopened, the view shows the stored matrix without a new test.
    const measuredAt = await matrix.getAttribute('data-measured-at');
    await view.getByTestId('close-overlay').click();
    await page.getByTestId('open-clusters').click();
    await page.getByTestId('clusters-view').getByTestId('cluster-item').filter({ hasText: 'pair' }).click();
    await expect(page.getByTestId('link-matrix')).toHaveAttribute('data-measured-at', measuredAt!);
    await expect(page.getByTestId('survey')).toHaveCount(0);
  } finally {
    await studio.close();
  }
});

test('fields are checked where they are typed; hosts, settings and clusters are edited and removed; a failed test holds Deploy back, after a restart too; a stored cluster prices the plan', async ({ page }) => {
  // A home of its own: the tests above stored clusters of the same names.
  const mine = studioHome('clusters-edit');
  let studio = await launchIsolatedStudio(mine.env);
  type Stored = { name: string; hosts: Array<{ alias: string; address: string; port: number; user: string }>; remoteDir?: string; setup?: string[]; env?: Record<string, string> };
  const stored = () => JSON.parse(readFileSync(join(mine.home, 'shoal-config', 'clusters.json'), 'utf8')) as { clusters: Stored[] };
  try {
    const view = await openClustersView(page, studio.url);
    const form = view.getByTestId('add-hosts-form');
    // Add with empty fields: the schema's messages at the fields, nothing saved.
    await view.getByTestId('add-cluster-name').fill('');
    await view.getByTestId('add-hosts-submit').click();
    await expect(form.getByTestId('add-cluster-error')).toHaveText('give the cluster a name');
    await expect(form.getByTestId('add-hosts-error')).toHaveText('give at least one host as user@address[:port]');
    await expect(view.getByTestId('add-hosts')).toHaveAttribute('aria-invalid', 'true');
    await expect(view.getByTestId('add-hosts')).toHaveAttribute('aria-describedby', 'add-hosts-error');
    // Bad values, said as they are typed.
    await view.getByTestId('add-cluster-name').fill('-lab');
    await expect(form.getByTestId('add-cluster-error')).toContainText('starts with a letter or digit');
    await view.getByTestId('add-cluster-name').fill('lab');
    await view.getByTestId('add-hosts').fill('alice@10.0.0.5:70000');
    await expect(form.getByTestId('add-hosts-error')).toHaveText('host 1: "alice@10.0.0.5:70000": port 70000 is not between 1 and 65535');
    await view.getByTestId('add-jump').fill('bob@');
    await expect(form.getByTestId('add-jump-error')).toContainText('jump host "bob@" is not a host');
    await page.screenshot({ path: 'test-results/clusters-validation.png' });
    await view.getByTestId('add-jump').fill('');
    // What only the studio can check comes back at its field: the key file is not there.
    await view.getByTestId('add-hosts').fill('alice@127.0.0.5:1, alice@127.0.0.6:1');
    await view.getByTestId('add-identity').fill(join(mine.home, 'no-such-key'));
    await view.getByTestId('add-hosts-submit').click();
    await expect(form.getByTestId('add-identity-error')).toHaveText(`Identity file ${join(mine.home, 'no-such-key')} does not exist.`);
    expect(existsSync(join(mine.home, 'shoal-config', 'clusters.json'))).toBe(false);
    await view.getByTestId('add-identity').fill('');
    // The cluster's settings may come with its hosts, checked at their fields too.
    await form.getByTestId('add-settings-toggle').click();
    await form.getByTestId('add-remote-dir').fill('/');
    await expect(form.getByTestId('add-remote-dir-error')).toHaveText('the remote directory must be a folder of its own, not / or ~ itself');
    await form.getByTestId('add-remote-dir').fill('~/shoal-lab');
    await form.getByTestId('add-env').fill('SHOAL_X=1');
    await expect(form.getByTestId('add-env-error')).toHaveText('SHOAL_X: SHOAL_*, NODE_PATH and HOME are set by Shoal; choose another name');
    await form.getByTestId('add-env').fill('');
    await view.getByTestId('add-hosts-submit').click();
    await expect(view.getByTestId('cluster-host')).toHaveCount(2);
    await expect(form.locator('.field__error')).toHaveCount(0);
    expect(stored().clusters[0].remoteDir).toBe('~/shoal-lab');

    // Not tested yet: said beside Deploy, which probes every host itself before it starts anything.
    await view.getByTestId('close-overlay').click();
    await page.getByTestId('deploy-target').selectOption('lab');
    await expect(page.getByTestId('deploy-note')).toHaveText('lab has not been tested: Deploy checks each host before it starts; Test in Clusters to know beforehand.');
    await expect(page.getByTestId('deploy-test-cluster')).toHaveText('Test now');
    await expect(page.getByTestId('deploy-blocked')).toHaveCount(0);
    await page.getByTestId('deploy-target').selectOption('local');
    await page.getByTestId('open-clusters').click();

    // A test where no host is ready (nothing listens on port 1).
    await view.getByTestId('test-cluster').click();
    await expect(view.getByTestId('test-summary')).toHaveText('0 of 2 hosts ready', { timeout: 60_000 });

    // Edit a host: a bad address is said at the field; a good one is stored.
    const second = view.locator('[data-testid="cluster-host"][data-host="127.0.0.6"]');
    await second.getByTestId('edit-host').click();
    await second.getByTestId('edit-host-address').fill('alice@');
    await expect(second.getByTestId('edit-host-address-error')).toContainText('is not a host');
    await second.getByTestId('edit-host-address').fill('carol@127.0.0.7:2');
    await second.getByTestId('edit-host-save').click();
    await expect(view.locator('[data-testid="cluster-host"][data-host="127.0.0.7"]')).toContainText('carol@127.0.0.7:2');
    expect(stored().clusters[0].hosts[1]).toMatchObject({ alias: '127.0.0.7', address: '127.0.0.7', port: 2, user: 'carol' });

    // Its hosts changed, the cluster is tested again: still none ready, so Deploy to it is held back, saying why.
    await view.getByTestId('test-cluster').click();
    await expect(view.getByTestId('test-summary')).toHaveText('0 of 2 hosts ready', { timeout: 60_000 });
    await view.getByTestId('close-overlay').click();
    await page.getByTestId('deploy-target').selectOption('lab');
    await expect(page.getByTestId('deploy-button')).toBeDisabled();
    await expect(page.getByTestId('deploy-blocked')).toContainText(/^The last connection test of lab \(tested (just now|\d+ min ago)\) found 0 of 2 hosts ready \(127\.0\.0\.5: /);
    await expect(page.getByTestId('deploy-blocked')).toContainText('fix them and test again in Clusters.');
    // The stored cluster prices the plan: two hosts, one core each until a passing test measures them.
    await page.getByTestId('cluster-picker').selectOption('ssh:lab');
    await expect(page.getByTestId('cluster-picker').locator('option:checked')).toHaveText('lab — stored, 2 hosts, 2 devices');
    await expect(page.getByTestId('cluster-assumed')).toContainText('127.0.0.5, 127.0.0.7 not measured by a passing test: 1 CPU core each');
    await page.screenshot({ path: 'test-results/clusters-deploy-blocked.png' });
    await page.getByTestId('cluster-picker').selectOption('local');

    // A fresh studio over the same home: the failed test is stored with the cluster, so Deploy is still held back.
    await studio.close();
    studio = await launchIsolatedStudio(mine.env);
    await page.goto(studio.url);
    await expect(page.getByTestId('status')).toContainText('Ready', { timeout: 30_000 });
    await page.getByTestId('deploy-target').selectOption('lab');
    await expect(page.getByTestId('deploy-button')).toBeDisabled();
    await expect(page.getByTestId('deploy-blocked')).toContainText(/^The last connection test of lab \(tested (just now|\d+ min ago)\) found 0 of 2 hosts ready \(127\.0\.0\.5: /);
    await expect(page.getByTestId('deploy-blocked')).toContainText('127.0.0.7: ');
    await page.getByTestId('deploy-target').selectOption('local');

    // The Clusters view shows the stored test's age and each host's verdict, and offers a new test.
    await page.getByTestId('open-clusters').click();
    const reopened = page.getByTestId('clusters-view');
    await expect(reopened.getByTestId('last-test')).toHaveText(/^Last test \(tested (just now|\d+ min ago)\): 0 of 2 hosts ready, link survey skipped$/);
    await expect(reopened.getByTestId('stored-verdict')).toHaveCount(2);
    await expect(reopened.locator('[data-testid="cluster-host"][data-host="127.0.0.5"]').getByTestId('stored-verdict')).toHaveAttribute('data-ok', 'false');
    await expect(reopened.getByTestId('test-cluster')).toHaveText('Test again');

    // Settings: checked at their fields as typed, with the schema's words; saved as a whole.
    const settings = reopened.getByTestId('cluster-settings-form');
    await expect(settings.getByTestId('settings-remote-dir')).toHaveValue('~/shoal-lab');
    await settings.getByTestId('settings-remote-dir').fill('scratch/shoal');
    await expect(settings.getByTestId('settings-remote-dir-error')).toContainText('the remote directory must start with ~/');
    await settings.getByTestId('settings-remote-dir').fill('/scratch/shoal');
    await expect(settings.getByTestId('settings-remote-dir-error')).toHaveCount(0);
    await settings.getByTestId('settings-env').fill('HOME=/tmp');
    await expect(settings.getByTestId('settings-env-error')).toHaveText('HOME: SHOAL_*, NODE_PATH and HOME are set by Shoal; choose another name');
    await settings.getByTestId('settings-env').fill('OMP_NUM_THREADS=4\nno equals sign');
    await expect(settings.getByTestId('settings-env-error')).toHaveText('line 2: "no equals sign" is not NAME=value (e.g. OMP_NUM_THREADS=4)');
    await expect(settings.getByTestId('settings-env')).toHaveAttribute('aria-invalid', 'true');
    await settings.getByTestId('settings-save').click();
    expect(stored().clusters[0].env).toBeUndefined();
    await settings.getByTestId('settings-env').fill('OMP_NUM_THREADS=4');
    await settings.getByTestId('settings-setup').fill('echo one\n\necho two');
    await settings.getByTestId('settings-save').click();
    await expect(reopened.getByTestId('clusters-message')).toContainText('Settings of lab saved');
    await expect(settings.locator('.field__error')).toHaveCount(0);
    expect(stored().clusters[0]).toMatchObject({ remoteDir: '/scratch/shoal', setup: ['echo one', 'echo two'], env: { OMP_NUM_THREADS: '4' } });
    await page.screenshot({ path: 'test-results/clusters-settings.png' });

    // A host changed after the test is not covered by it: the other host's failure still holds Deploy back.
    const seventh = reopened.locator('[data-testid="cluster-host"][data-host="127.0.0.7"]');
    await seventh.getByTestId('edit-host').click();
    await seventh.getByTestId('edit-host-address').fill('carol@127.0.0.8:2');
    await seventh.getByTestId('edit-host-save').click();
    await expect(reopened.getByTestId('last-test')).toContainText('0 of 1 host ready, link survey skipped; not tested since added or changed: 127.0.0.8');
    await expect(reopened.locator('[data-testid="cluster-host"][data-host="127.0.0.8"]')).toContainText('Not tested since it was added or changed');
    await reopened.getByTestId('close-overlay').click();
    await page.getByTestId('deploy-target').selectOption('lab');
    await expect(page.getByTestId('deploy-blocked')).toContainText(/^The last connection test of lab \(tested (just now|\d+ min ago)\) found 0 of 1 host ready \(127\.0\.0\.5: .*\); 127\.0\.0\.8 was added or changed since: fix them/);
    // Testing again from beside Deploy opens Clusters on the cluster, where the test runs (and asks about host keys).
    await page.getByTestId('deploy-test-cluster').click();
    await expect(reopened.getByTestId('test-summary')).toHaveText('0 of 2 hosts ready', { timeout: 60_000 });
    await reopened.getByTestId('close-overlay').click();
    await expect(page.getByTestId('deploy-blocked')).toContainText('127.0.0.8: ');
    await expect(page.getByTestId('deploy-blocked')).not.toContainText('added or changed');
    await page.getByTestId('deploy-target').selectOption('local');

    // Remove a host (asked first; Escape answers no), rename the cluster, remove it.
    await page.getByTestId('open-clusters').click();
    const first = reopened.locator('[data-testid="cluster-host"][data-host="127.0.0.5"]');
    await first.getByTestId('remove-host').click();
    await expect(first.getByTestId('remove-host-confirm')).toContainText('Remove 127.0.0.5 from lab?');
    await page.keyboard.press('Escape');
    await expect(first.getByTestId('remove-host-confirm')).toHaveCount(0);
    await expect(reopened).toBeVisible();
    await first.getByTestId('remove-host').click();
    await first.getByTestId('remove-host-confirm-yes').click();
    await expect(reopened.getByTestId('cluster-host')).toHaveCount(1);
    expect(stored().clusters[0].hosts.map((h) => h.alias)).toEqual(['127.0.0.8']);

    await reopened.getByTestId('rename-cluster').click();
    await reopened.getByTestId('rename-cluster-input').fill('lab two');
    await expect(reopened.getByTestId('rename-cluster-error')).toContainText('uses letters, digits, dot, dash and underscore');
    await reopened.getByTestId('rename-cluster-input').fill('lab2');
    await reopened.getByTestId('rename-cluster-save').click();
    await expect(reopened.getByTestId('cluster-item')).toHaveText(/lab2/);
    expect(stored().clusters.map((c) => c.name)).toEqual(['lab2']);

    await reopened.getByTestId('remove-cluster').click();
    await reopened.getByTestId('remove-cluster-confirm-yes').click();
    await expect(reopened.getByTestId('clusters-empty')).toBeVisible();
    expect(stored().clusters).toEqual([]);
  } finally {
    await studio.close();
    removeHomes([mine.home]);
  }
});
