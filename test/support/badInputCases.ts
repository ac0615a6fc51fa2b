import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Ordinary-but-wrong command lines, generated over every option of every `shoal` subcommand and every
 * file kind it reads. Each case says how the command must exit (2: wrong as typed; 1: a value
 * refused) and what the message must name — the option, the path or the value — so that a refusal
 * names its cause.
 */
export interface BadInputCase {
  name: string;
  args: string[];
  exit: 1 | 2;
  /** The message names at least one of these. */
  names: string[];
}

/** The files the cases point at, made under `root`: wrong kinds of model, plan, data and cluster files. */
export function badFiles(root: string) {
  const file = (name: string, text: string) => {
    const path = join(root, name);
    writeFileSync(path, text);
    return path;
  };
  const folder = (name: string) => {
    const path = join(root, name);
    mkdirSync(path, { recursive: true });
    return path;
  };
  const earlierRun = folder('earlier-run');
  mkdirSync(join(earlierRun, 'checkpoints'));
  writeFileSync(join(earlierRun, 'job.json'), JSON.stringify({ jobId: 'job-earlier', createdAt: new Date(0).toISOString(), model: 'mlp', agents: 1, steps: 4 }));
  writeFileSync(join(earlierRun, 'events.jsonl'), '{"type":"final"}\n');
  writeFileSync(join(earlierRun, 'checkpoints', 'step-0000004.ckpt'), 'not really a checkpoint');
  const userFolder = folder('user-files');
  writeFileSync(join(userFolder, 'job.json'), '{"mine": true}');
  writeFileSync(join(userFolder, 'notes.txt'), 'my notes');
  return {
    missing: join(root, 'no-such-file.json'),
    folder: folder('a-folder'),
    empty: file('empty.json', ''),
    notJson: file('not-json.json', 'this is not json {'),
    array: file('array.json', '[1, 2, 3]'),
    object: file('object.json', '{}'),
    text: file('notes.txt', 'plain text'),
    belowFile: join(root, 'notes.txt', 'below'),
    emptyCsv: file('empty.csv', ''),
    earlierRun,
    userFolder,
  };
}

const INT_VALUES = ['abc', '1.5', '-3', '1e400', ''];
const NUMBER_VALUES = ['abc', '-3', '1e400'];

/** A numeric option given each wrong value (`valid` lists those values the option accepts). */
function numeric(command: string[], key: string, values: string[], valid: string[] = []): BadInputCase[] {
  return values
    .filter((v) => !valid.includes(v))
    .map((v) => ({ name: `${command.join(' ')} --${key} ${JSON.stringify(v)}`, args: [...command, `--${key}=${v}`], exit: 1, names: [`--${key}`] }));
}

/** Every file-kind mistake for an option that names a file. */
function fileKinds(command: string[], key: string, f: ReturnType<typeof badFiles>, kinds: Array<keyof ReturnType<typeof badFiles>>): BadInputCase[] {
  return kinds.map((kind) => ({ name: `${command.join(' ')} --${key} <${kind}>`, args: [...command, `--${key}`, f[kind]], exit: 1, names: [f[kind], `--${key}`] }));
}

/** An unknown option and an argument too many: wrong as typed, exit 2. */
function typed(command: string[], extra = 'extra'): BadInputCase[] {
  return [
    { name: `${command.join(' ')} --bogus`, args: [...command, '--bogus'], exit: 2, names: ['--bogus'] },
    { name: `${command.join(' ')} ${extra}`, args: [...command, extra], exit: 2, names: [extra] },
  ];
}

const TRAIN_INTS: Array<[string, string[]]> = [['steps', []], ['batch', []], ['micro-batches', []], ['seed', ['0']], ['checkpoint-every', []], ['eval-every', []]];
const TRAIN_NUMBERS = ['epochs', 'lr', 'clip-norm'];

export function badInputCases(f: ReturnType<typeof badFiles>, outFor: (i: number) => string): BadInputCase[] {
  const cases: BadInputCase[] = [];
  let n = 0;
  // Every train case gets a fresh --out of its own: that it is still absent afterwards shows no half-made run folder.
  const train = () => ['train', '--model', 'mlp', '--cluster', 'local:1', '--out', outFor(n++)];
  for (const [key, valid] of TRAIN_INTS) cases.push(...numeric(train(), key, INT_VALUES, valid));
  for (const key of TRAIN_NUMBERS) cases.push(...numeric(train(), key, NUMBER_VALUES));
  cases.push(...numeric(train(), 'zero', ['abc', '1.5', '-1', '4', '']));
  cases.push(...numeric(train(), 'validation-split', ['abc', '0', '1', '-0.5', '1e400']));
  cases.push(...numeric([...train(), '--optimizer', 'momentum'], 'momentum', ['abc', '1e400']));
  cases.push(...numeric([...train(), '--optimizer', 'adamw'], 'weight-decay', ['abc', '1e400']));
  for (const [key, value] of [['plan', 'pp9-dp9-bogus'], ['schedule', 'sideways'], ['optimizer', 'gradient-ascent'], ['loss', 'mean_happiness'], ['shuffle', 'maybe']]) {
    cases.push({ name: `train --${key} ${value}`, args: [...train(), `--${key}`, value], exit: 1, names: [value, `--${key}`, `field ${key}`] });
  }
  cases.push(...fileKinds(train(), 'model', f, ['missing', 'folder', 'empty', 'notJson', 'array', 'object', 'text', 'belowFile']));
  cases.push(...fileKinds(train(), 'plan-file', f, ['missing', 'folder', 'empty', 'notJson', 'array', 'object', 'belowFile']));
  cases.push(...fileKinds(train(), 'data', f, ['missing', 'folder', 'emptyCsv', 'text', 'belowFile']));
  for (const cluster of ['local:0', 'local:abc', 'local:1000', f.missing, f.notJson]) {
    cases.push({ name: `train --cluster ${cluster}`, args: ['train', '--model', 'mlp', '--out', outFor(n++), '--cluster', cluster], exit: 1, names: [cluster, '--cluster', 'local'] });
  }
  const outCases: Array<[string, string, string]> = [
    ['an earlier run', f.earlierRun, 'holds an earlier run'],
    ['user files', f.userFolder, 'is not empty'],
    ['a file', f.text, 'is a file, not a folder'],
    ['below a file', f.belowFile, 'is a file, not a folder'],
    ['""', '', '--out is empty'],
  ];
  for (const [what, out, says] of outCases) cases.push({ name: `train --out ${what}`, args: ['train', '--model', 'mlp', '--cluster', 'local:1', '--out', out], exit: 1, names: [says] });
  cases.push({ name: 'train --overwrite without --out', args: ['train', '--model', 'mlp', '--overwrite'], exit: 1, names: ['--overwrite'] });
  cases.push({ name: 'train --steps and --epochs', args: [...train(), '--steps', '2', '--epochs', '1'], exit: 1, names: ['--steps and --epochs'] });
  cases.push({ name: 'train without --model', args: ['train', '--out', outFor(n++)], exit: 1, names: ['--model'] });
  cases.push(...typed(train()));

  const deploy = ['deploy', '--cluster', 'local', '--model', 'mlp'];
  for (const key of ['steps', 'checkpoint-every', 'eval-every']) cases.push(...numeric(deploy, key, INT_VALUES));
  cases.push(...numeric(deploy, 'epochs', NUMBER_VALUES));
  cases.push(...fileKinds(deploy, 'model', f, ['missing', 'folder', 'empty', 'notJson', 'object']));
  cases.push(...fileKinds(['deploy', '--model', 'mlp'], 'cluster', f, ['missing', 'folder', 'notJson']));
  cases.push({ name: 'deploy --out', args: [...deploy, '--out', outFor(n++)], exit: 2, names: ['--out'] });
  cases.push(...typed(deploy));

  const suggest = ['plan', '--model', 'mlp', '--cluster', 'local:2'];
  cases.push(...numeric(suggest, 'top', INT_VALUES));
  cases.push(...numeric(suggest, 'global-batch', INT_VALUES));
  cases.push(...fileKinds(['plan', '--cluster', 'local:2'], 'model', f, ['missing', 'folder', 'empty', 'notJson', 'object']));
  cases.push(...fileKinds(['plan', '--model', 'mlp'], 'cluster', f, ['missing', 'folder', 'notJson']));
  cases.push(...typed(suggest));
  const preset = ['plan', '--model', 'mlp', '--plan', 'pp1-dp1'];
  for (const key of ['batch', 'micro-batches']) cases.push(...numeric(preset, key, INT_VALUES));
  for (const key of ['steps', 'epochs', 'out', 'checkpoint-every']) cases.push({ name: `plan --plan --${key}`, args: [...preset, `--${key}`, '3'], exit: 2, names: [`--${key}`] });
  cases.push({ name: 'plan --plan unknown preset', args: ['plan', '--model', 'mlp', '--plan', 'pp0-dp0'], exit: 1, names: ['pp0-dp0'] });
  cases.push(...fileKinds(['plan', '--model', 'mlp'], 'plan-file', f, ['missing', 'folder', 'notJson', 'array', 'object']));
  cases.push(...typed(preset));

  const resume = ['resume', f.earlierRun, '--cluster', 'local:1'];
  for (const key of ['steps', 'checkpoint-every']) cases.push(...numeric(resume, key, INT_VALUES));
  cases.push(...numeric(resume, 'epochs', NUMBER_VALUES));
  cases.push({ name: 'resume a corrupt checkpoint', args: resume, exit: 1, names: [join(f.earlierRun, 'checkpoints', 'step-0000004.ckpt')] });
  for (const target of [f.missing, f.folder, 'job-nobody']) cases.push({ name: `resume ${target}`, args: ['resume', target], exit: 1, names: [target.split('/').pop()!] });
  cases.push({ name: 'resume without a run', args: ['resume'], exit: 2, names: ['Give the run to resume'] });
  cases.push(...typed(['resume', f.earlierRun], 'second-run'));

  for (const command of ['attach', 'stop', 'pull', 'resize']) {
    cases.push({ name: `${command} unknown job`, args: [command, 'job-nobody', ...(command === 'resize' ? ['--add', 'local:1'] : [])], exit: 1, names: ['job-nobody'] });
    cases.push({ name: `${command} without a job`, args: [command], exit: 2, names: ['Give the job'] });
    cases.push(...typed([command, 'job-nobody'], 'second-job'));
  }
  cases.push({ name: 'resize --add nothing', args: ['resize', 'job-nobody', '--add', 'local:abc'], exit: 1, names: ['local:abc', 'job-nobody'] });
  cases.push({ name: 'export unknown run', args: ['export', 'job-nobody'], exit: 1, names: ['job-nobody'] });
  cases.push({ name: 'export a corrupt checkpoint', args: ['export', f.earlierRun], exit: 1, names: ['step-0000004.ckpt'] });
  cases.push({ name: 'export without a run', args: ['export'], exit: 2, names: ['Give the run'] });
  cases.push(...typed(['export', f.earlierRun], 'second-run'));
  cases.push(...typed(['jobs']));
  cases.push(...typed(['models']));
  cases.push({ name: 'an unknown command', args: ['frobnicate'], exit: 2, names: ['unknown command "frobnicate"'] });
  cases.push({ name: 'an unknown cluster command', args: ['cluster', 'frobnicate'], exit: 2, names: ['frobnicate'] });
  return cases;
}
