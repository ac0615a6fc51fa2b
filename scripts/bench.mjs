// `npm run bench -- [name ...] [--flags for the benchmarks]`: runs bench/<name>.ts with tsx, one after
// another (all of them when no name is given). Each benchmark prints its table and writes
// bench/results/<name>.json; flags (and their values) are passed through to every benchmark.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const available = readdirSync(join(root, 'bench'))
  .filter((f) => f.endsWith('.ts'))
  .map((f) => f.slice(0, -3))
  .sort();

const argv = process.argv.slice(2);
const names = [];
const passThrough = [];
for (let i = 0; i < argv.length; i++) {
  if (argv[i].startsWith('--')) {
    passThrough.push(argv[i]);
    if (argv[i + 1] !== undefined && !argv[i + 1].startsWith('--')) passThrough.push(argv[++i]);
  } else names.push(argv[i]);
}
const unknown = names.filter((n) => !available.includes(n));
if (unknown.length) {
  console.error(`Unknown benchmark ${unknown.join(', ')}. Available: ${available.join(', ')}.`);
  process.exit(2);
}

let failed = 0;
for (const name of names.length ? names : available) {
  const tsx = join(root, 'node_modules/.bin/tsx');
  const res = spawnSync(tsx, [join('bench', `${name}.ts`), ...passThrough], { cwd: root, stdio: 'inherit' });
  if (res.status !== 0) {
    console.error(`bench ${name}: failed (${res.error?.message ?? `exit ${res.status}`})`);
    failed++;
  }
}
process.exit(failed ? 1 : 0);
