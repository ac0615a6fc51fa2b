import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { badFiles, badInputCases, type BadInputCase } from '../support/badInputCases.js';
import { badDataCases, badDataFiles } from '../support/badInputData.js';

/**
 * The project's own bad-input suite: a few hundred ordinary-but-wrong command lines over every
 * subcommand, option and file kind (test/support/badInputCases.ts), through the real `shoal` command.
 * Each must exit as promised with one message naming its cause — no stack trace, no bare OS error,
 * no "does not know" — leave earlier runs and the user's files as they were, and leave no run folder.
 * They all fail in the command's own process before any agent starts, a few at a time.
 */
const root = join(__dirname, '..', '..');
const work = mkdtempSync(join(tmpdir(), 'shoal-bad-input-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

mkdirSync(join(work, 'files'));
const files = badFiles(join(work, 'files'));
const outs = join(work, 'outs');
let dataRuns = 0;
const cases = [...badInputCases(files, (i) => join(outs, `run-${i}`)), ...badDataCases(badDataFiles(join(work, 'files')), () => join(outs, `data-run-${dataRuns++}`))];
const home = join(work, 'home');
mkdirSync(home);
const env = { ...process.env, HOME: home, XDG_CONFIG_HOME: join(home, '.config'), XDG_DATA_HOME: join(home, '.local', 'share'), SHOAL_DATA_DIR: join(work, 'data'), CI: 'true' };

interface Answer {
  code: number | null;
  stderr: string;
}

function shoal(args: string[]): Promise<Answer> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [join(root, 'bin', 'shoal.cjs'), ...args], { cwd: work, env, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    // Every case fails before a job starts; one that trains instead is stopped and reported.
    const timer = setTimeout(() => child.kill('SIGKILL'), 90_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr });
    });
  });
}

/** Every file under `dir` with its bytes. */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    // A table's index beside it is Shoal's own cache (README, "Your data"), not a change to the data.
    if (entry.isFile() && !entry.name.endsWith('.shoal-index.json')) out[join(entry.parentPath, entry.name)] = readFileSync(join(entry.parentPath, entry.name), 'base64');
  }
  return out;
}

const before = snapshot(join(work, 'files'));
const answers = new Map<BadInputCase, Answer>();

beforeAll(async () => {
  const queue = [...cases];
  const worker = async () => {
    for (let c = queue.shift(); c; c = queue.shift()) answers.set(c, await shoal(c.args));
  };
  await Promise.all(Array.from({ length: 3 }, worker));
}, 600_000);

/** What a message that names its cause must not look like. */
const SYMPTOMS: Array<[RegExp, string]> = [
  [/\n\s+at .+:\d+:\d+/, 'a stack trace'],
  [/^shoal( [\w-]+)?: E[A-Z]{2,}:/m, 'a bare OS error'],
  [/does not know/, '"does not know"'],
  // zod's "received undefined" says a field is missing; any other undefined is a value not filled in.
  [/(?<!received )\bundefined\b|\bNaN\b|\[object Object\]/, 'an unfilled value'],
];

describe(`${cases.length} bad inputs over every shoal subcommand`, () => {
  it('are over a hundred and fifty, each named once', () => {
    expect(cases.length).toBeGreaterThanOrEqual(150);
    expect(new Set(cases.map((c) => c.name)).size).toBe(cases.length);
  });

  it.each(cases.map((c) => [c.name, c] as const))('%s', (_name, c) => {
    const answer = answers.get(c)!;
    expect(answer.code, answer.stderr).toBe(c.exit);
    expect(answer.stderr.trim(), 'a message').not.toBe('');
    expect(c.names.some((n) => answer.stderr.includes(n)), `names one of ${JSON.stringify(c.names)}:\n${answer.stderr}`).toBe(true);
    for (const [pattern, what] of SYMPTOMS) expect(pattern.test(answer.stderr), `no ${what}:\n${answer.stderr}`).toBe(false);
  });

  it("leave earlier runs and the user's files as they were, and no run folder behind", () => {
    expect(snapshot(join(work, 'files'))).toEqual(before);
    expect(existsSync(outs) ? readdirSync(outs) : []).toEqual([]);
    const runs = join(work, 'data', 'runs');
    expect(existsSync(runs) ? readdirSync(runs) : []).toEqual([]);
  });
});
