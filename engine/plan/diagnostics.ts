/** A finding about a plan: data, not an exception, so the studio can show it next to its subject. */
export interface Diagnostic {
  severity: 'error' | 'warning';
  code: string;
  message: string;
  /** What the finding is about: a stage index, a layer id, a cluster device index, or a plan field. */
  where: { stage?: number; layer?: string; device?: number; field?: string };
  /** One sentence on how to fix it. */
  hint: string;
}

/** Collects findings as a check runs, so each check reads as a list of rules. */
export class Findings {
  readonly list: Diagnostic[] = [];

  error(code: string, message: string, where: Diagnostic['where'], hint: string): void {
    this.list.push({ severity: 'error', code, message, where, hint });
  }

  warning(code: string, message: string, where: Diagnostic['where'], hint: string): void {
    this.list.push({ severity: 'warning', code, message, where, hint });
  }
}

export function hasErrors(diagnostics: Diagnostic[]): boolean {
  return diagnostics.some((d) => d.severity === 'error');
}

/** One readable paragraph, for the command line and thrown errors. */
export function formatDiagnostics(diagnostics: Diagnostic[]): string {
  return diagnostics
    .map((d) => {
      const where = Object.entries(d.where)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ');
      return `${d.severity} ${d.code}${where ? ` (${where})` : ''}: ${d.message} Fix: ${d.hint}`;
    })
    .join('\n');
}
