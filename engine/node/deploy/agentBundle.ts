import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';

/**
 * Where the bundled agent (dist/agent/shoal-agent.cjs) lives. From the CLI bundle it sits beside us
 * in dist/; from TypeScript sources (tests) it is under the repository's dist/.
 */
export function agentBundlePath(): string {
  // No __dirname when the sources run as ES modules (benchmarks under tsx): the working directory decides.
  const here = typeof __dirname === 'string' ? __dirname : null;
  const candidates = [
    process.env.SHOAL_AGENT_BUNDLE,
    here && join(here, 'agent', 'shoal-agent.cjs'),
    here && resolve(here, '..', '..', '..', 'dist', 'agent', 'shoal-agent.cjs'),
    resolve(process.cwd(), 'dist', 'agent', 'shoal-agent.cjs'),
  ].filter((p): p is string => Boolean(p));
  const found = candidates.find((p) => existsSync(p));
  if (!found) {
    throw new Error(`The agent bundle is missing (looked in ${candidates.join(', ')}). Run \`npm run build\` in the Shoal folder.`);
  }
  return found;
}
