import { localClusterSpec } from '../../../engine/cluster/cluster';
import { parseClusterSpec } from '../../../engine/cluster/parseClusterSpec';
import type { ClusterSpec } from '../../../engine/cluster/spec';
import dgx from '../../../examples/clusters/dgx-a100-2x8.json';
import hetero from '../../../examples/clusters/hetero-v100-t4.json';
import whale from '../../../examples/clusters/whale-64xv100.json';

/**
 * The clusters a plan can be made for: "This machine" (N local agent processes, the only one the
 * studio trains on today) and the example specs, for planning and pricing bigger hardware.
 */
export const CLUSTER_CHOICES = ['local', 'whale-64xv100', 'hetero-v100-t4', 'dgx-a100-2x8'] as const;
export type ClusterChoice = (typeof CLUSTER_CHOICES)[number];

const EXAMPLES: Record<Exclude<ClusterChoice, 'local'>, unknown> = { 'whale-64xv100': whale, 'hetero-v100-t4': hetero, 'dgx-a100-2x8': dgx };
const parsed = new Map<string, ClusterSpec>();

export function clusterSpec(choice: ClusterChoice, agents: number): ClusterSpec {
  const key = choice === 'local' ? `local:${agents}` : choice;
  let spec = parsed.get(key);
  if (!spec) {
    spec = choice === 'local' ? localClusterSpec(agents) : parseClusterSpec(EXAMPLES[choice]);
    parsed.set(key, spec);
  }
  return spec;
}

export function clusterLabel(choice: ClusterChoice, agents: number): string {
  if (choice === 'local') return `This machine (${agents} agent${agents === 1 ? '' : 's'})`;
  const spec = clusterSpec(choice, agents);
  return `${choice} (${spec.devices.length} devices)`;
}
