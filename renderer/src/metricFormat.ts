/** A validation metric for people: accuracies as percentages, errors and losses to 4 decimals. */
export function formatMetric(name: string, value: number): string {
  if (!Number.isFinite(value)) return '—';
  return /(^|_)(acc|accuracy)$|accuracy/i.test(name) ? `${(value * 100).toFixed(2)}%` : value.toFixed(4);
}
