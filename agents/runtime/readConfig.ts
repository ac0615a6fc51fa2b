import type { z } from 'zod';
import { describeIssues } from '../../engine/protocol/describeIssues.js';

/**
 * Processes started by Shoal receive their configuration — including the job secret — as one JSON
 * line on standard input, never on the command line (visible to every user in `ps`) or in the
 * environment (inherited by children and readable in /proc). Returned as read: check it with
 * `parseConfig` against its schema (engine/protocol/processConfig.ts).
 */
export function readConfigFromStdin(what: string): Promise<unknown> {
  return new Promise((resolve, reject) => {
    let text = '';
    const onData = (chunk: Buffer) => {
      text += chunk.toString('utf8');
      const newline = text.indexOf('\n');
      if (newline < 0) return;
      process.stdin.off('data', onData);
      process.stdin.pause();
      try {
        resolve(JSON.parse(text.slice(0, newline)) as unknown);
      } catch (err) {
        reject(new Error(`The ${what} configuration on standard input is not valid JSON: ${(err as Error).message}`));
      }
    };
    process.stdin.on('data', onData);
    process.stdin.once('end', () => reject(new Error(`Standard input closed before the ${what} configuration arrived. Start ${what}s through Shoal (\`shoal train\` or the studio).`)));
  });
}

/** The configuration checked against its schema; a bad one names the field (a studio of another version wrote it). */
export function parseConfig<S extends z.ZodType>(schema: S, raw: unknown, what: string): z.infer<S> {
  const result = schema.safeParse(raw);
  if (result.success) return result.data;
  throw new Error(`The ${what} configuration is not one this ${what} understands: ${describeIssues(result.error.issues)}. Was it written by another Shoal version? Redeploy the agent bundle from this studio.`);
}
