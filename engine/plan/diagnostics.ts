import { z } from 'zod';
import { LIMITS } from './limits.js';

/** A finding about a plan: data, not an exception, so the studio can show it next to its subject. */
export const DiagnosticSchema = z.object({
  severity: z.enum(['error', 'warning']),
  code: z.string(),
  message: z.string(),
  /** What the finding is about: a stage index, a layer id, a cluster device index, or a plan field. */
  where: z.object({ stage: z.number().optional(), layer: z.string().optional(), device: z.number().optional(), field: z.string().optional() }),
  /** One sentence on how to fix it. */
  hint: z.string(),
});
export type Diagnostic = z.infer<typeof DiagnosticSchema>;

/**
 * Collects findings as a check runs, so each check reads as a list of rules. Past LIMITS.findingsKept
 * they are counted, not stored (a plan with a million bad stages must not cost a million messages);
 * `list` then ends with one `more-diagnostics` finding that says how many were left out.
 */
export class Findings {
  private readonly kept: Diagnostic[] = [];
  private omitted = { error: 0, warning: 0 };

  constructor(private readonly keep: number = LIMITS.findingsKept) {}

  get list(): Diagnostic[] {
    const { error, warning } = this.omitted;
    if (error + warning === 0) return this.kept;
    return [...this.kept, moreDiagnostics(error, warning)];
  }

  error(code: string, message: string, where: Diagnostic['where'], hint: string): void {
    this.add({ severity: 'error', code, message, where, hint });
  }

  warning(code: string, message: string, where: Diagnostic['where'], hint: string): void {
    this.add({ severity: 'warning', code, message, where, hint });
  }

  private add(d: Diagnostic): void {
    if (this.kept.length < this.keep) this.kept.push(d);
    else this.omitted[d.severity]++;
  }
}

/** The closing finding of a capped list: errors among the omitted ones keep the list an error. */
function moreDiagnostics(errors: number, warnings: number): Diagnostic {
  const counts = [errors && `${errors} error${errors === 1 ? '' : 's'}`, warnings && `${warnings} warning${warnings === 1 ? '' : 's'}`].filter(Boolean).join(' and ');
  return { severity: errors ? 'error' : 'warning', code: 'more-diagnostics', message: `${counts} more of the same kinds were not listed.`, where: {}, hint: 'Fix the ones listed first; most of the rest usually share their cause.' };
}

/** A rejected input, as data: every finding with its code. Thrown where a caller cannot go on. */
export class DiagnosticError extends Error {
  /** Without a heading the message is the findings' own sentences (one problem reads as one sentence). */
  constructor(
    readonly diagnostics: Diagnostic[],
    heading?: string,
  ) {
    super(heading === undefined ? diagnostics.map((d) => d.message).join('\n') : `${heading}\n${formatDiagnostics(diagnostics)}`);
    this.name = 'DiagnosticError';
  }
}

export function hasErrors(diagnostics: Diagnostic[]): boolean {
  return diagnostics.some((d) => d.severity === 'error');
}

/**
 * One readable paragraph, for the command line and thrown errors: the first `shown` findings (errors
 * before warnings), then one line counting the rest, so a hostile input cannot print megabytes.
 */
export function formatDiagnostics(diagnostics: Diagnostic[], shown: number = LIMITS.diagnosticsShown): string {
  const ordered = diagnostics.length > shown ? [...diagnostics].sort((a, b) => Number(a.severity === 'warning') - Number(b.severity === 'warning')) : diagnostics;
  const lines = ordered
    .slice(0, shown)
    .map((d) => {
      const where = Object.entries(d.where)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ');
      return `${d.severity} ${d.code}${where ? ` (${where})` : ''}: ${d.message} Fix: ${d.hint}`;
    });
  const rest = ordered.slice(shown);
  if (rest.length) {
    const errors = rest.filter((d) => d.severity === 'error').length;
    lines.push(`… and ${rest.length} more (${errors} error${errors === 1 ? '' : 's'}, ${rest.length - errors} warning${rest.length - errors === 1 ? '' : 's'}) not shown.`);
  }
  return lines.join('\n');
}
