import type { z } from 'zod';

/** At most this many issues are written out: past a few, more detail hides the first fix. */
const SHOWN = 5;

/**
 * The one wording of a failed zod check, for every boundary (API calls, wire frames, records on disk,
 * configs): "plan.stages.0.layers: expected array; agents: too small…", the first few issues.
 */
export function describeIssues(issues: readonly z.core.$ZodIssue[]): string {
  const shown = issues.slice(0, SHOWN).map((i) => (i.path.length ? `${i.path.map(String).join('.')}: ${i.message}` : i.message));
  const more = issues.length - shown.length;
  return shown.join('; ') + (more > 0 ? `; and ${more} more` : '');
}
