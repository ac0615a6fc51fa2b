import type { ClusterSpec } from '../cluster/spec.js';
import type { Plan } from '../plan/plan.js';
import type { PlannerResult } from './types.js';

const GiB = 2 ** 30;

/**
 * A plan's shape in a few characters: stages × replicas × shards, micro-batches, schedule, ZeRO,
 * recomputation, virtual nodes; given the cluster, also whether a replica's pipeline stays inside a host.
 */
export function planShape(plan: Plan, cluster?: ClusterSpec): string {
  const s = plan.stages;
  const dp = [...new Set(s.map((x) => x.dataParallel))].join('/');
  const tp = Math.max(...s.map((x) => x.tensorParallel));
  const parts = [`pp${s.length}`, `dp${dp}`, ...(tp > 1 ? [`tp${tp}`] : []), `m${plan.microBatches}`, plan.schedule];
  if (plan.zero > 0) parts.push(`zero${plan.zero}`);
  if (plan.recompute) parts.push('recompute');
  if (plan.virtualNodes?.perReplica) parts.push(`vn${plan.virtualNodes.total}`);
  const [a, b] = [s[0].devices?.[0], s[1]?.devices?.[0]];
  if (cluster && a !== undefined && b !== undefined) parts.push(cluster.devices[a].host === cluster.devices[b].host ? '(pipeline in a host)' : '(stages across hosts)');
  return parts.join(' ');
}

/** The planner's answer as a readable table for a terminal: one row per suggestion, its rationale under it. */
export function formatSuggestions(result: PlannerResult, title: string, cluster?: ClusterSpec): string {
  const lines = [`${title}: ${result.suggestions.length} suggestion(s), ${result.evaluated} candidates in ${result.searchMs.toFixed(0)} ms`, ''];
  const header = ['#', 'step ms', 'bubble', 'peak GiB', 'comm GB/step', 'plan'];
  const rows = result.suggestions.map((s, i) => [
    String(i + 1),
    s.predicted.stepTimeMs.toFixed(1),
    `${Math.max(0, s.predicted.bubbleFraction * 100).toFixed(1)}%`,
    (Math.max(...s.predicted.peakMemoryBytes) / GiB).toFixed(2),
    (s.predicted.commBytesPerStep / 1e9).toFixed(2),
    planShape(s.plan, cluster),
  ]);
  const widths = header.map((h, c) => Math.max(h.length, ...rows.map((r) => r[c].length)));
  const line = (cells: string[]) => cells.map((cell, c) => (c === cells.length - 1 ? cell : cell.padStart(widths[c]))).join('  ');
  lines.push(line(header), widths.map((w) => '-'.repeat(w)).join('  '));
  result.suggestions.forEach((s, i) => lines.push(line(rows[i]), `${' '.repeat(widths[0] + 2)}${s.rationale}`));
  return lines.join('\n');
}
