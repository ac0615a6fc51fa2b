import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { localClusterSpec } from '../../engine/cluster/cluster.js';
import type { ClusterLinkProfile } from '../../engine/cluster/linkProfile.js';
import { withMeasuredLinks } from '../../engine/cluster/measuredLinks.js';
import { parseClusterSpec } from '../../engine/cluster/parseClusterSpec.js';
import { linkBetween } from '../../engine/cluster/topology.js';
import { runClusterCommand } from '../../engine/node/commands/cluster.js';
import { clusterProfileFile, loadClusterProfile } from '../../engine/node/hosts/clusterProfile.js';
import { saveClusterHosts } from '../../engine/node/hosts/clusterStore.js';
import type { SshHost } from '../../engine/node/hosts/host.js';
import { freePort, makeUserKey, stopAllSshd, type PrivateSshd, type UserKey, hostFor, startHostsWithHomes } from '../support/sshd.js';
import { useTempHome, removeHomes } from '../support/homes.js';
import { runCommand } from '../support/commandRun.js';

/**
 * `shoal cluster test` with its link survey: three real OpenSSH servers (127.0.0.2–4, each with its own
 * $HOME), real agents uploaded and started on each, every pair of hosts probed, the matrix stored as the
 * cluster's profile and turned into the cost model's links. A fourth host that is down fails preflight
 * and is left out of the survey, said so.
 */
let env: ReturnType<typeof useTempHome>;
let key: UserKey;
let servers: PrivateSshd[];
let homes: string[];
const aliases = ['h2', 'h3', 'h4'];

beforeAll(async () => {
  env = useTempHome();
  key = makeUserKey(join(env.home, 'keys'), 'id_survey');
  ({ servers, homes } = await startHostsWithHomes(aliases, [key.publicKey]));
  const down = { address: '127.0.0.4', port: await freePort('127.0.0.4'), user: servers[0].user };
  saveClusterHosts('lab', [...servers.map((s, i) => hostOf(s, aliases[i])), hostOf(down, 'down')]);
});

afterAll(async () => {
  await stopAllSshd();
  removeHomes(homes);
  env?.restore();
});

const hostOf = (s: { address: string; port: number; user: string }, alias: string): SshHost => hostFor(s, alias, key.path);

const run = (...args: string[]) => runCommand(runClusterCommand, ...args);

describe('cluster link survey', () => {
  let profile: ClusterLinkProfile;

  test('test --json: preflight, then every pair of the hosts that passed is measured by real agents and stored', async () => {
    const r = await run('test', 'lab', '--trust-new', '--json');
    // The down host fails preflight, so the command exits 1, but the others are surveyed.
    expect(r.code).toBe(1);
    const report = JSON.parse(r.out) as { ok: boolean; survey: { profile: ClusterLinkProfile; file: string } | { error: string } };
    expect(report.ok).toBe(false);
    expect(report.survey, JSON.stringify(report.survey).slice(0, 2000)).toHaveProperty('profile');
    const survey = report.survey as { profile: ClusterLinkProfile; file: string };
    profile = survey.profile;
    expect(profile.hosts).toEqual(aliases);
    expect(profile.leftOut).toEqual([{ host: 'down', reason: expect.stringMatching(/^failed preflight: reachable: .*connection refused/) }]);
    // Every unordered pair once, each with a positive bandwidth and latency.
    const pairs = profile.links.map((l) => [l.from, l.to].sort().join('-')).sort();
    expect(pairs).toEqual(['h2-h3', 'h2-h4', 'h3-h4']);
    for (const l of profile.links) {
      expect(l.beta, `${l.from}→${l.to}`).toBeGreaterThan(0);
      expect(l.alpha, `${l.from}→${l.to}`).toBeGreaterThan(0);
      expect(l.rttMs).toBeGreaterThan(0);
    }
    // Progress went to stderr per phase: the upload per host, agents joining, linking, probing.
    for (const a of aliases) {
      expect(r.err).toMatch(new RegExp(`^${a}\\s+prepare\\s+ok\\s+upload: uploaded to ~/\\.shoal/agent/`, 'm'));
      expect(r.err).toMatch(new RegExp(`^${a}\\s+agent\\s+ok\\s+joined \\(\\d of 3\\)`, 'm'));
    }
    expect(r.err).toMatch(/^links\s+survey\s+…\s+measuring the links between h2, h3, h4 with agents; left out: down \(failed preflight\)$/m);
    expect(r.err).toMatch(/^links\s+probe\s+ok\s+3 pair\(s\) of 3 hosts measured/m);
    expect(r.err).not.toMatch(/^down\s+prepare/m);

    // Stored beside clusters.json, mode 600, and read back the same.
    expect(survey.file).toBe(join(env.configDir, 'cluster-profiles', 'lab.json'));
    expect(clusterProfileFile('lab')).toBe(survey.file);
    expect(statSync(survey.file).mode & 0o777).toBe(0o600);
    expect(loadClusterProfile('lab')).toEqual(profile);
    expect(Number.isNaN(Date.parse(profile.measuredAt))).toBe(false);
    // The survey's processes are gone: its temporary folder was removed on every host, its log kept.
    for (const h of homes) {
      const [id, ...more] = readdirSync(join(h, '.shoal', 'runs')).filter((n) => n.startsWith('survey-'));
      expect(more).toEqual([]);
      expect(existsSync(join(h, '.shoal', 'runs', id))).toBe(true);
      expect(existsSync(join(h, '.shoal', 'jobs', id))).toBe(false);
    }
  });

  test('the cost model takes the measured links for the surveyed host pairs', () => {
    const spec = parseClusterSpec({
      name: 'lab',
      hosts: aliases.map((name) => ({ name, devices: [{ preset: 'cpu-core', count: 2 }], intraLink: { alpha: 75e-6, beta: 2e9 } })),
      links: { interHost: { alpha: 1e-3, beta: 1e8 } },
    });
    const measured = withMeasuredLinks(spec, profile);
    // Devices 0–1 are on h2, 2–3 on h3, 4–5 on h4.
    const h2h3 = profile.links.find((l) => [l.from, l.to].sort().join('-') === 'h2-h3')!;
    expect(linkBetween(measured, 1, 2)).toEqual({ alpha: h2h3.alpha, beta: h2h3.beta });
    expect(linkBetween(measured, 3, 4)).not.toEqual({ alpha: 1e-3, beta: 1e8 });
    // Inside a host, and in the spec it came from, nothing changed.
    expect(linkBetween(measured, 0, 1)).toEqual({ alpha: 75e-6, beta: 2e9 });
    expect(linkBetween(spec, 1, 2)).toEqual({ alpha: 1e-3, beta: 1e8 });
    // A spec whose hosts were not surveyed is an error naming both sides, not a silent no-op.
    expect(() => withMeasuredLinks(localClusterSpec(2), profile)).toThrow(/h2, h3, h4.*localhost/);
  });

  test('show prints the stored matrix; list mentions it; --no-survey measures nothing and keeps it', async () => {
    const shown = await run('show', 'lab');
    expect(shown.code).toBe(0);
    expect(shown.out).toContain(`Links between hosts of lab, measured ${profile.measuredAt}`);
    expect(shown.out).toMatch(/^\s+h2\s+h3\s+h4$/m);
    expect(shown.out).toMatch(/^h2\s+—\s+\d+(\.\d+)? [GM]B\/s \/ \d+(\.\d+)? (µs|ms)\s+/m);
    expect(shown.out).toContain('left out: down (failed preflight');
    expect((await run('list')).out).toContain(`lab  (links measured ${profile.measuredAt}: shoal cluster show lab)`);

    const r = await run('test', 'lab', '--trust-new', '--no-survey');
    expect(r.code).toBe(1);
    expect(r.out).toContain('3 of 4 hosts ready');
    expect(r.out).not.toContain('Links between hosts');
    expect(r.err).not.toMatch(/prepare/);
    expect(loadClusterProfile('lab')?.measuredAt).toBe(profile.measuredAt);
  });
});

