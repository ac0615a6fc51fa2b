import { userInfo } from 'node:os';
import { matchPatternList } from './sshPatterns.js';

/**
 * OpenSSH's `Match` criteria, decided for one host. `all`, `host` (the HostName as configured so far),
 * `originalhost` (the name typed), `user` (the remote user so far), `localuser`, `canonical` and
 * `final` (true in OpenSSH's second pass, which it runs when any Match uses them) are decided as ssh
 * does; `exec`, `localnetwork`, `tagged` and anything newer are not (Shoal runs no commands from the
 * config): such a block is not applied, and the import says so.
 */
export interface MatchState {
  originalHost: string;
  host: string;
  user: string;
  /** The second pass, where `canonical` and `final` are true. */
  finalPass: boolean;
}

export interface MatchVerdict {
  applies: boolean;
  /** Criteria Shoal could not decide (the block is then not applied). */
  undecided: string[];
}

const LIST_CRITERIA = new Set(['host', 'originalhost', 'user', 'localuser', 'exec', 'localnetwork', 'tagged', 'command', 'version', 'sessiontype']);

export function usesFinalPass(criteria: string[]): boolean {
  return criteria.some((c) => /^!?(canonical|final)$/i.test(c));
}

export function decideMatch(criteria: string[], state: MatchState): MatchVerdict {
  const undecided: string[] = [];
  let applies = true;
  for (let i = 0; i < criteria.length; i++) {
    const word = criteria[i];
    const negated = word.startsWith('!');
    const name = (negated ? word.slice(1) : word).toLowerCase();
    if (name === 'all') continue;
    let result: boolean;
    if (name === 'canonical' || name === 'final') {
      result = state.finalPass;
    } else if (LIST_CRITERIA.has(name)) {
      const arg = criteria[++i];
      if (arg === undefined) {
        undecided.push(`${word} (no argument)`);
        applies = false;
        continue;
      }
      const patterns = arg.split(',');
      if (name === 'host') result = matchPatternList(state.host, patterns);
      else if (name === 'originalhost') result = matchPatternList(state.originalHost, patterns);
      else if (name === 'user') result = matchPatternList(state.user, patterns);
      else if (name === 'localuser') result = matchPatternList(userInfo().username, patterns);
      else {
        undecided.push(`${word} ${arg}`);
        applies = false;
        continue;
      }
    } else {
      undecided.push(word);
      applies = false;
      continue;
    }
    if (result === negated) applies = false;
  }
  return { applies, undecided };
}
