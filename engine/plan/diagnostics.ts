/** A finding about a plan: data, not an exception, so the studio can show it next to its subject. */
export interface Diagnostic {
  severity: 'error' | 'warning';
  code: string;
  message: string;
  /** What the finding is about: a stage index, a layer id, or a plan field. */
  where: { stage?: number; layer?: string; field?: string };
  /** One sentence on how to fix it. */
  hint: string;
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
