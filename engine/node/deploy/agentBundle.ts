import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';

/**
 * Where the bundled agent (dist/agent/shoal-agent.cjs) lives. From the CLI bundle it sits beside us
 * in dist/; from TypeScript sources (tests) it is under the repository's dist/.
 */
export function agentBundlePath(): string {
  const candidates = [
    process.env.SHOAL_AGENT_BUNDLE,
    join(__dirname, 'agent', 'shoal-agent.cjs'),
    resolve(__dirname, '..', '..', '..', 'dist', 'agent', 'shoal-agent.cjs'),
    resolve(process.cwd(), 'dist', 'agent', 'shoal-agent.cjs'),
  ].filter((p): p is string => Boolean(p));
  const found = candidates.find((p) => existsSync(p));
  if (!found) {
    throw new Error(`The agent bundle is missing (looked in ${candidates.join(', ')}). Run \`npm run build\` in the Shoal folder.`);
  }
  return found;
}
