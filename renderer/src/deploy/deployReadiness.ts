import type { LastTest } from '../clusters/clustersStore';
import { testedAgo } from '../clusters/testedAgo';

/**
 * What the stored connection test of a deploy target says about deploying to it now: `blocked` (the
 * Deploy button is disabled with this reason) while hosts failed the last test as they are now, or a
 * `note` when hosts have not been tested as they are (never tested, or added or changed since). Deploy
 * itself probes every host before it starts anything, so an untested host is said, not held back. A
 * failed test holds Deploy back however old it is: hosts fixed since are found by testing again, one
 * click, rather than by a deploy that fails half-way. Pure: `now` is passed in so the age stays right.
 */
export interface DeployReadiness {
  blocked?: string;
  note?: string;
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
const list = (hosts: string[]) => hosts.join(', ');

export function deployReadiness(cluster: string, test: LastTest | undefined, now: number): DeployReadiness {
  if (!test) return { note: `${cluster} has not been tested: Deploy checks each host before it starts; Test in Clusters to know beforehand.` };
  const untested = test.untested.length > 0 ? `${list(test.untested)} ${test.untested.length === 1 ? 'was' : 'were'} added or changed since` : '';
  if (test.ready < test.hosts) {
    // Each reason is a sentence of its own; its full stop would sit before the list's separators.
    const failures = test.failed.map((f) => `${f.host}: ${f.why.replace(/\.$/, '')}`).join('; ');
    return {
      blocked: `The last connection test of ${cluster} (${testedAgo(test.at, now)}) found ${test.ready} of ${plural(test.hosts, 'host')} ready (${failures})${untested ? `; ${untested}` : ''}: fix them and test again in Clusters.`,
    };
  }
  if (untested) return { note: `${untested} the last test of ${cluster} (${testedAgo(test.at, now)}): Deploy checks each host before it starts; test again in Clusters to know beforehand.` };
  return {};
}
