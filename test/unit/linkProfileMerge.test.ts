import { afterEach, beforeEach, expect, test } from 'vitest';
import type { ClusterLinkProfile } from '../../engine/cluster/linkProfile.js';
import { loadClusterProfile, saveClusterProfile } from '../../engine/node/hosts/clusterProfile.js';
import { saveSurveyProfile } from '../../engine/node/hosts/mergeLinkProfile.js';
import { useTempHome } from '../support/homes.js';

/** A partial `shoal cluster test` (one host down) must not forget the links it could not measure. */

let env: ReturnType<typeof useTempHome>;
beforeEach(() => (env = useTempHome()));
afterEach(() => env.restore());

const link = (from: string, to: string, rttMs: number) => ({ from, to, alpha: rttMs / 2000, beta: 1e9, rttMs });

test('a survey of two of three hosts keeps the stored pairs with the third, and their time; it replaces the pair it measured', () => {
  const full: ClusterLinkProfile = { version: 1, cluster: 'lab', measuredAt: '2026-12-01T10:00:00.000Z', hosts: ['a', 'b', 'c'], links: [link('a', 'b', 1), link('a', 'c', 2), link('b', 'c', 3)], leftOut: [] };
  saveClusterProfile(full);
  const partial: ClusterLinkProfile = { version: 1, cluster: 'lab', measuredAt: '2026-12-02T10:00:00.000Z', hosts: ['b', 'a'], links: [link('b', 'a', 5)], leftOut: [{ host: 'c', reason: 'failed preflight: reachable: connection refused' }] };
  const { profile } = saveSurveyProfile(partial, ['a', 'b', 'c']);
  const stored = loadClusterProfile('lab')!;
  expect(stored).toEqual(profile);
  expect(stored.hosts).toEqual(['b', 'a', 'c']);
  expect(stored.links).toEqual([link('b', 'a', 5), { ...link('a', 'c', 2), measuredAt: full.measuredAt }, { ...link('b', 'c', 3), measuredAt: full.measuredAt }]);
  expect(stored.measuredAt).toBe(partial.measuredAt);
  expect(stored.leftOut).toEqual(partial.leftOut);
});

test('pairs of a host removed from the cluster are dropped; without a stored profile the survey is stored as it is', () => {
  const first: ClusterLinkProfile = { version: 1, cluster: 'pair', measuredAt: '2026-12-01T10:00:00.000Z', hosts: ['a', 'b'], links: [link('a', 'b', 1)], leftOut: [] };
  expect(saveSurveyProfile(first, ['a', 'b']).profile).toEqual(first);
  const next: ClusterLinkProfile = { ...first, hosts: ['a', 'd'], links: [link('a', 'd', 4)] };
  expect(saveSurveyProfile(next, ['a', 'd']).profile.links).toEqual([link('a', 'd', 4)]);
});
