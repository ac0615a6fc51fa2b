import { describe, expect, it } from 'vitest';
import type { LastTest } from '../../renderer/src/clusters/clustersStore.js';
import { deployReadiness } from '../../renderer/src/deploy/deployReadiness.js';

const now = Date.UTC(2026, 11, 2, 12);
const hour = 3_600_000;
const test = (over: Partial<LastTest>): LastTest => ({ at: now - 3 * hour, ready: 2, hosts: 2, facts: {}, failed: [], untested: [], ...over });

describe('deployReadiness', () => {
  it('holds Deploy back while hosts failed the last test, saying when, which and why', () => {
    const r = deployReadiness('lab', test({ ready: 1, failed: [{ host: 'gpu2', why: 'connect: ECONNREFUSED. Check that the host is up.' }] }), now);
    expect(r.blocked).toBe('The last connection test of lab (tested 3 h ago) found 1 of 2 hosts ready (gpu2: connect: ECONNREFUSED. Check that the host is up): fix them and test again in Clusters.');
    expect(r.note).toBeUndefined();
  });

  it('names the hosts added or changed since, with the failures that still hold', () => {
    const r = deployReadiness('lab', test({ ready: 0, hosts: 1, failed: [{ host: 'gpu1', why: 'auth: denied' }], untested: ['gpu3', 'gpu4'], at: now - 3 * 24 * hour }), now);
    expect(r.blocked).toBe('The last connection test of lab (tested 3 days ago) found 0 of 1 host ready (gpu1: auth: denied); gpu3, gpu4 were added or changed since: fix them and test again in Clusters.');
  });

  it('a failed test holds Deploy back however old it is', () => {
    expect(deployReadiness('lab', test({ ready: 0, failed: [{ host: 'a', why: 'x' }, { host: 'b', why: 'y' }], at: now - 400 * 24 * hour }), now).blocked).toContain('tested 400 days ago');
  });

  it('only notes hosts not tested as they are now (Deploy probes every host first)', () => {
    const changed = deployReadiness('lab', test({ hosts: 1, ready: 1, untested: ['gpu2'], at: now - 20_000 }), now);
    expect(changed).toEqual({ note: 'gpu2 was added or changed since the last test of lab (tested just now): Deploy checks each host before it starts; test again in Clusters to know beforehand.' });
    expect(deployReadiness('lab', undefined, now)).toEqual({ note: 'lab has not been tested: Deploy checks each host before it starts; Test in Clusters to know beforehand.' });
  });

  it('says nothing when every host passed as it is now', () => {
    expect(deployReadiness('lab', test({}), now)).toEqual({});
  });
});
