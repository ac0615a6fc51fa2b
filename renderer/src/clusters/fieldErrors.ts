import type { z } from 'zod';

/**
 * The validator's messages by form field: the first issue of each top-level field of `value` under
 * `schema` (the same zod schema the studio's Node side parses the request with), so each message is
 * shown at its field. A list field's issue names the entry ("host 2: …"), a record field's its key ("HOME: …").
 */
export function fieldErrors<T>(schema: z.ZodType<T>, value: unknown, entry: Record<string, string> = {}): { data?: T; errors: Record<string, string> } {
  const parsed = schema.safeParse(value);
  if (parsed.success) return { data: parsed.data, errors: {} };
  const errors: Record<string, string> = {};
  for (const issue of parsed.error.issues) {
    const field = String(issue.path[0] ?? 'form');
    if (errors[field]) continue;
    const index = issue.path[1];
    errors[field] = typeof index === 'number' ? `${entry[field] ?? 'entry'} ${index + 1}: ${issue.message}` : typeof index === 'string' ? `${index}: ${issue.message}` : issue.message;
  }
  return { errors };
}
