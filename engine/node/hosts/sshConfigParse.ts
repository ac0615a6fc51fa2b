import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import { expandHome } from './configDir.js';
import { expandPathGlob } from './sshPatterns.js';

/**
 * Read an OpenSSH client config into a flat list of directives, each tagged with the block it sits in,
 * with `Include` expanded in place. Resolution (first value wins) is sshConfigResolve's job; keeping the
 * two apart lets the resolver follow ProxyJump hops through the same list.
 */

/**
 * The block a directive belongs to: before any Host (applies to all), a Host block, or a Match block
 * (its criteria as written, decided per host by sshConfigMatch.ts). Directives of one block share the
 * block object, so a Match is decided once per block, as OpenSSH does at the Match line.
 */
export type ConfigBlock = { kind: 'all' } | { kind: 'host'; patterns: string[] } | { kind: 'match'; criteria: string[]; file: string; line: number };

export interface ConfigDirective {
  block: ConfigBlock;
  /** Lower-cased keyword: `hostname`, `identityfile` … */
  keyword: string;
  args: string[];
  file: string;
  line: number;
}

/** OpenSSH stops following Includes at this depth; so do we, which also ends include loops. */
const MAX_INCLUDE_DEPTH = 16;

/** Split a config line into words, honouring double quotes and `keyword=value`. */
export function splitConfigLine(line: string): string[] {
  const words: string[] = [];
  const re = /"([^"]*)"|([^\s"]+)/g;
  for (let m = re.exec(line); m; m = re.exec(line)) words.push(m[1] ?? m[2]);
  if (words.length > 0) {
    // `Port=22`, `Port =22`, `Port= 22`: the first `=` separates keyword and value.
    const eq = words[0].indexOf('=');
    if (eq > 0) words.splice(0, 1, words[0].slice(0, eq), ...(words[0].slice(eq + 1) ? [words[0].slice(eq + 1)] : []));
    else if (words[1]?.startsWith('=')) words.splice(1, 1, ...(words[1].slice(1) ? [words[1].slice(1)] : []));
  }
  return words;
}

/** Parse `file` (and what it includes). Relative Include paths are relative to ~/.ssh, as in OpenSSH. */
export function parseSshConfigFile(file: string): ConfigDirective[] {
  const out: ConfigDirective[] = [];
  parseInto(file, { kind: 'all' }, 0, out);
  return out;
}

function parseInto(file: string, outer: ConfigBlock, depth: number, out: ConfigDirective[]): void {
  const text = readFileSync(file, 'utf8');
  let block = outer;
  text.split(/\r?\n/).forEach((raw, i) => {
    const trimmed = raw.trim();
    if (!trimmed || trimmed.startsWith('#')) return;
    const [word, ...args] = splitConfigLine(trimmed);
    if (!word) return;
    const keyword = word.toLowerCase();
    if (keyword === 'host') {
      block = { kind: 'host', patterns: args };
      // Kept as a directive too, so that the list of host names comes from the same walk.
      out.push({ block, keyword, args, file, line: i + 1 });
      return;
    }
    if (keyword === 'match') {
      block = { kind: 'match', criteria: args, file, line: i + 1 };
      return;
    }
    if (keyword === 'include') {
      if (depth + 1 > MAX_INCLUDE_DEPTH) throw new Error(`${file}:${i + 1}: Include nested deeper than ${MAX_INCLUDE_DEPTH} (a loop?).`);
      for (const arg of args) {
        const expanded = expandHome(arg);
        const path = isAbsolute(expanded) ? expanded : join(homedir(), '.ssh', expanded);
        // An included file's Host lines end the including block only inside that file.
        for (const included of expandPathGlob(path)) parseInto(included, block, depth + 1, out);
      }
      return;
    }
    out.push({ block, keyword, args, file, line: i + 1 });
  });
}
