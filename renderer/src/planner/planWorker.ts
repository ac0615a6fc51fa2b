import type { ClusterSpec } from '../../../engine/cluster/spec';
import type { ModelGraph } from '../../../engine/model/graph';
import { suggestPlans } from '../../../engine/planner/suggestPlans';
import type { PlannerResult } from '../../../engine/planner/suggestPlans';
import { errorText } from '../store/errorText';

/** The auto-planner off the main thread: one request in, progress and one answer out. */
export interface PlanRequest {
  id: number;
  model: ModelGraph;
  cluster: ClusterSpec;
  top: number;
}

export type PlanReply =
  | { id: number; kind: 'progress'; done: number; total: number }
  | { id: number; kind: 'done'; result: PlannerResult }
  | { id: number; kind: 'error'; message: string };

/** Run the planner, reporting progress at most every 100 ms. Shared by the worker and the in-page fallback. */
export function runPlanner(request: PlanRequest, reply: (message: PlanReply) => void): void {
  const { id, model, cluster, top } = request;
  let last = 0;
  try {
    const result = suggestPlans(model, cluster, {
      top,
      onProgress: (done, total) => {
        const now = performance.now();
        if (now - last < 100) return;
        last = now;
        reply({ id, kind: 'progress', done, total });
      },
    });
    reply({ id, kind: 'done', result });
  } catch (error) {
    reply({ id, kind: 'error', message: errorText(error) });
  }
}

const scope = globalThis as unknown as { onmessage: ((e: MessageEvent<PlanRequest>) => void) | null; postMessage(m: PlanReply): void; document?: unknown };
if (typeof scope.document === 'undefined') {
  scope.onmessage = (e) => runPlanner(e.data, (m) => scope.postMessage(m));
}
