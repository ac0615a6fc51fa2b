import type { Plan } from '../../../engine/plan/plan';
import { applyEdit, useEditor } from './editorStore';
import type { EditResult } from './planEdits';
import { mergeWithNext, moveLayers, selectionRun, splitStageAt, stageOfLayer } from './planEdits';

/**
 * The stage editor's commands on the current plan and selection, shared by the context menu, the
 * keyboard shortcuts and drag-and-drop. Each applies one edit or says why it cannot.
 */
function edit(make: (plan: Plan) => EditResult): boolean {
  const plan = useEditor.getState().plan;
  if (!plan) return false;
  return applyEdit(make(plan));
}

export function moveTo(ids: string[], stage: number): boolean {
  return edit((plan) => moveLayers(plan, ids, stage));
}

/** `]` and `[`: the selection to the next or previous stage. */
export function moveBy(ids: string[], delta: 1 | -1): boolean {
  return edit((plan) => {
    const run = selectionRun(plan, ids);
    return 'refused' in run ? run : moveLayers(plan, ids, run.stage + delta);
  });
}

/** Split the selection's stage before its first layer. */
export function splitAt(ids: string[]): boolean {
  return edit((plan) => {
    const run = selectionRun(plan, ids);
    return 'refused' in run ? run : splitStageAt(plan, plan.stages[run.stage].layers[run.first]);
  });
}

export function mergeNext(ids: string[]): boolean {
  return edit((plan) => mergeWithNext(plan, stageOfLayer(plan, ids[0])));
}

/** Whether an edit would be accepted, and if not why: for greying out menu items. */
export function refusal(result: EditResult): string | undefined {
  return 'refused' in result ? result.refused : undefined;
}
