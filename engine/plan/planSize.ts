import type { Diagnostic } from './diagnostics.js';
import { LIMITS } from './limits.js';

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function tooLarge(field: string, message: string, hint: string): Diagnostic {
  return { severity: 'error', code: 'plan-too-large', message, where: { field }, hint };
}

/**
 * Checks the sizes of untrusted plan JSON before the schema parses it (zod would first build an issue
 * per bad element: 1.4 million stages made 200 MB of messages) and before anything allocates per rank:
 * stage, layer and device list lengths, and the degrees whose product is the number of agents.
 */
export function planSizeProblems(input: unknown): Diagnostic[] {
  if (!isRecord(input)) return [];
  const problems: Diagnostic[] = [];
  const { stages } = input;
  if (Array.isArray(stages)) {
    if (stages.length > LIMITS.stages) {
      problems.push(tooLarge('stages', `The plan has ${stages.length} stages; Shoal plans at most ${LIMITS.stages}.`, `Use at most ${LIMITS.stages} pipeline stages (one per device at most).`));
      return problems;
    }
    let layers = 0;
    let ranks = 0;
    stages.forEach((stage, s) => {
      if (!isRecord(stage)) return;
      if (Array.isArray(stage.layers)) layers += stage.layers.length;
      if (Array.isArray(stage.devices) && stage.devices.length > LIMITS.devices) {
        problems.push(tooLarge(`stages[${s}].devices`, `Stage ${s} lists ${stage.devices.length} devices; a plan uses at most ${LIMITS.devices}.`, `List at most ${LIMITS.devices} devices.`));
      }
      const degree = (key: string) => (typeof stage[key] === 'number' && (stage[key] as number) >= 1 ? (stage[key] as number) : 1);
      ranks += degree('dataParallel') * degree('tensorParallel');
    });
    if (layers > LIMITS.layers) {
      problems.push(tooLarge('stages', `The stages name ${layers} layers in all; Shoal models at most ${LIMITS.layers}.`, `Use a model of at most ${LIMITS.layers} layers.`));
    }
    if (ranks > LIMITS.devices) {
      problems.push(tooLarge('stages', `The plan needs ${ranks < 1e9 ? ranks : ranks.toExponential(2)} agents (every stage's dataParallel × tensorParallel, summed); Shoal runs at most ${LIMITS.devices}.`, `Lower the data-parallel or tensor-parallel degrees so that at most ${LIMITS.devices} devices are used.`));
    }
  }
  const vn = input.virtualNodes;
  if (isRecord(vn) && Array.isArray(vn.perReplica) && vn.perReplica.length > LIMITS.devices) {
    problems.push(tooLarge('virtualNodes.perReplica', `virtualNodes.perReplica has ${vn.perReplica.length} entries; a plan has at most ${LIMITS.devices} replicas.`, 'Give one count per data-parallel replica.'));
  }
  return problems;
}
