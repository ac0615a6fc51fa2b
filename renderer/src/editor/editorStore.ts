import { create } from 'zustand';
import type { Plan } from '../../../engine/plan/plan';
import type { EditResult } from './planEdits';

/**
 * The stage editor's state: the plan being edited with its undo/redo history, where it came from,
 * the selected layers, the last edit's note (or why an edit was refused), the open context menu and
 * the auto-plan suggestion previewed on the graph. Plans are immutable: history holds references.
 */
export interface LayerMenu {
  ids: string[];
  x: number;
  y: number;
}

export interface EditorState {
  plan?: Plan;
  /** Where the plan came from: a preset name or "auto-plan #2". */
  source: string;
  edited: boolean;
  past: Array<{ plan: Plan; edited: boolean; source: string }>;
  future: Array<{ plan: Plan; edited: boolean; source: string }>;
  selection: string[];
  anchor?: string;
  notice?: { tone: 'info' | 'refused'; text: string };
  menu?: LayerMenu;
  preview?: Plan;
}

const HISTORY = 200;

export const useEditor = create<EditorState>()(() => ({ source: '', edited: false, past: [], future: [], selection: [] }));

const snapshot = (s: EditorState) => (s.plan ? [{ plan: s.plan, edited: s.edited, source: s.source }] : []);

/** Load a plan from a preset or a suggestion; `fresh` (a new model) forgets the history. */
export function loadPlan(plan: Plan, source: string, fresh = false): void {
  useEditor.setState((s) => ({
    plan,
    source,
    edited: false,
    past: fresh ? [] : [...s.past, ...snapshot(s)].slice(-HISTORY),
    future: [],
    selection: fresh ? [] : s.selection,
    notice: undefined,
    menu: undefined,
    preview: undefined,
  }));
}

export function clearPlan(): void {
  useEditor.setState({ plan: undefined, source: '', edited: false, past: [], future: [], selection: [], notice: undefined, menu: undefined, preview: undefined });
}

/** Apply an edit: a refused one leaves the plan as it was and says why. */
export function applyEdit(result: EditResult): boolean {
  if ('refused' in result) {
    useEditor.setState({ notice: { tone: 'refused', text: result.refused }, menu: undefined });
    return false;
  }
  useEditor.setState((s) => {
    if (result.plan === s.plan) return { notice: undefined, menu: undefined };
    return {
      plan: result.plan,
      edited: true,
      past: [...s.past, ...snapshot(s)].slice(-HISTORY),
      future: [],
      notice: result.note ? { tone: 'info', text: result.note } : undefined,
      menu: undefined,
    };
  });
  return true;
}

export function undo(): void {
  useEditor.setState((s) => {
    const previous = s.past[s.past.length - 1];
    if (!previous) return {};
    return { ...previous, past: s.past.slice(0, -1), future: [...snapshot(s), ...s.future], notice: { tone: 'info', text: 'Undone.' }, menu: undefined };
  });
}

export function redo(): void {
  useEditor.setState((s) => {
    const next = s.future[0];
    if (!next) return {};
    return { ...next, past: [...s.past, ...snapshot(s)], future: s.future.slice(1), notice: { tone: 'info', text: 'Redone.' }, menu: undefined };
  });
}

export function setSelection(selection: string[], anchor?: string): void {
  useEditor.setState({ selection, anchor: anchor ?? selection[0], menu: undefined });
}

export function openMenu(menu: LayerMenu | undefined): void {
  useEditor.setState({ menu });
}

export function setPreview(preview: Plan | undefined): void {
  useEditor.setState({ preview });
}

export function dismissNotice(): void {
  useEditor.setState({ notice: undefined });
}
