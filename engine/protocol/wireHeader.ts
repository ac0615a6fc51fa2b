import type { z } from 'zod';
import { describeIssues } from './describeIssues.js';

/**
 * Check a received frame header against its schema. A header that does not fit gets an error naming
 * the message type, the sender and the field — the sign of a peer from another Shoal version or a
 * bug — instead of a crash deep in the code that would have read it. Payloads are never parsed.
 */
export function parseHeader<S extends z.ZodType>(schema: S, header: unknown, from: string): z.infer<S> {
  const result = schema.safeParse(header);
  if (result.success) return result.data;
  const type = typeof header === 'object' && header !== null && typeof (header as { type?: unknown }).type === 'string' ? (header as { type: string }).type : '(no type)';
  throw new Error(`Unreadable "${type}" message from ${from}: ${describeIssues(result.error.issues)}.`);
}

/** The default of an exhaustive `switch` over a message union: the compiler fails here when a case is missing. */
export function unhandled(message: never): never {
  throw new Error(`Unhandled message ${JSON.stringify(message)}.`);
}
