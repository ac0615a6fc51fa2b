import { useEffect, useState } from 'react';
import type { ModelGraph } from '../../../engine/model/graph';
import type { PlannerResult } from '../../../engine/planner/suggestPlans';
import { clusterSpec } from '../store/clusters';
import type { ClusterChoice } from '../store/clusters';
import type { PlanReply, PlanRequest } from './planWorker';

export type PlannerState =
  | { status: 'idle' }
  | { status: 'running'; done: number; total: number }
  | { status: 'done'; result: PlannerResult }
  | { status: 'error'; message: string };

let worker: Worker | undefined;
let nextId = 1;
const results = new Map<string, PlannerResult>();

/** The planner in the page, after a paint: for shells where module workers cannot load. */
function planInPage(request: PlanRequest, reply: (m: PlanReply) => void): () => void {
  let cancelled = false;
  const timer = setTimeout(() => void import('./planWorker').then((m) => !cancelled && m.runPlanner(request, reply)), 30);
  return () => {
    cancelled = true;
    clearTimeout(timer);
  };
}

/** Start the planner in a Web Worker; where the worker cannot load, run it in the page. */
function plan(request: PlanRequest, reply: (m: PlanReply) => void): () => void {
  let w: Worker;
  try {
    w = worker ??= new Worker(new URL('./planWorker.ts', import.meta.url), { type: 'module' });
  } catch {
    return planInPage(request, reply);
  }
  let fallback: (() => void) | undefined;
  const stopWorker = () => {
    w.removeEventListener('message', listen);
    w.removeEventListener('error', failed);
    w.terminate();
    if (worker === w) worker = undefined;
  };
  const listen = (e: MessageEvent<PlanReply>) => {
    if (e.data.id !== request.id) return;
    if (e.data.kind !== 'progress') {
      w.removeEventListener('message', listen);
      w.removeEventListener('error', failed);
    }
    reply(e.data);
  };
  const failed = () => {
    stopWorker();
    fallback = planInPage(request, reply);
  };
  w.addEventListener('message', listen);
  w.addEventListener('error', failed);
  w.postMessage(request);
  // A search still running for an old request is abandoned: a fresh worker starts next time.
  return () => (fallback ? fallback() : stopWorker());
}

/** The planner's suggestions for the open model on the chosen cluster, searched off the main thread and cached. */
export function usePlanner(model: ModelGraph | undefined, choice: ClusterChoice, agents: number, top = 5): PlannerState {
  const key = model ? `${model.name}|${choice === 'local' ? `local:${agents}` : choice}|${top}` : '';
  const [state, setState] = useState<{ key: string; value: PlannerState }>({ key: '', value: { status: 'idle' } });
  useEffect(() => {
    if (!model) return;
    const known = results.get(key);
    if (known) return setState({ key, value: { status: 'done', result: known } });
    setState({ key, value: { status: 'running', done: 0, total: 0 } });
    let finished = false;
    const stop = plan({ id: nextId++, model, cluster: clusterSpec(choice, agents), top }, (m) => {
      if (m.kind === 'progress') setState({ key, value: { status: 'running', done: m.done, total: m.total } });
      else {
        finished = true;
        if (m.kind === 'done') results.set(key, m.result);
        setState({ key, value: m.kind === 'done' ? { status: 'done', result: m.result } : { status: 'error', message: m.message } });
      }
    });
    return () => {
      if (!finished) stop();
    };
  }, [key, model, choice, agents, top]);
  if (state.key === key) return state.value;
  return model ? { status: 'running', done: 0, total: 0 } : { status: 'idle' };
}
