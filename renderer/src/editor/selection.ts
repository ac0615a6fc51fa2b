import type { DragEvent, MouseEvent } from 'react';
import { useStudio } from '../store/studioStore';
import { openMenu, setSelection, useEditor } from './editorStore';

/**
 * Selecting layers on the graph: a click selects a layer (or a folded block's layers), shift-click
 * extends the selection to a contiguous range in graph order, the arrow keys walk it. The same
 * selection is what a drag carries, what the context menu acts on, and what the shortcuts move.
 */
const indexOf = () => {
  const model = useStudio.getState().model;
  return { ids: model?.layers.map((l) => l.id) ?? [], index: new Map(model?.layers.map((l, i) => [l.id, i]) ?? []) };
};

/** Select `ids`, or with `extend` the range from the current selection through them. */
export function selectLayers(ids: string[], extend: boolean): string[] {
  const { selection, anchor } = useEditor.getState();
  if (!extend || selection.length === 0) {
    setSelection(ids, ids[0]);
    return ids;
  }
  const { ids: order, index } = indexOf();
  const at = [...selection, ...ids].map((id) => index.get(id) ?? -1).filter((i) => i >= 0);
  const range = order.slice(Math.min(...at), Math.max(...at) + 1);
  setSelection(range, anchor);
  return range;
}

/** Arrow keys: the next or previous layer in graph order; with shift, grow the selection that way. */
export function stepSelection(direction: 1 | -1, extend: boolean): void {
  const { selection } = useEditor.getState();
  const { ids: order, index } = indexOf();
  if (order.length === 0) return;
  if (selection.length === 0) return setSelection([order[direction > 0 ? 0 : order.length - 1]]);
  const at = selection.map((id) => index.get(id) ?? 0);
  const next = direction > 0 ? Math.min(order.length - 1, Math.max(...at) + 1) : Math.max(0, Math.min(...at) - 1);
  if (extend) selectLayers([order[next]], true);
  else setSelection([order[next]]);
}

/** The selection if it holds all of `ids`, else `ids` selected on their own. */
function actOn(ids: string[]): string[] {
  const { selection } = useEditor.getState();
  if (ids.every((id) => selection.includes(id))) return selection;
  setSelection(ids, ids[0]);
  return ids;
}

let dragged: string[] | undefined;
export const DRAG_TYPE = 'application/x-shoal-layers';

/** The layers being dragged right now, if a drag started on a layer of this page. */
export const draggedLayers = () => dragged;

/** Mouse handlers shared by layer and block nodes: select, open the context menu, start a drag. */
export function nodeHandlers(ids: string[]) {
  return {
    draggable: true,
    onClick: (e: MouseEvent) => {
      e.stopPropagation();
      selectLayers(ids, e.shiftKey);
    },
    onContextMenu: (e: MouseEvent) => {
      e.preventDefault();
      e.stopPropagation();
      openMenu({ ids: actOn(ids), x: e.clientX, y: e.clientY });
    },
    onDragStart: (e: DragEvent) => {
      dragged = actOn(ids);
      e.dataTransfer.setData(DRAG_TYPE, JSON.stringify(dragged));
      e.dataTransfer.setData('text/plain', dragged.join(', '));
      e.dataTransfer.effectAllowed = 'move';
    },
    onDragEnd: () => {
      dragged = undefined;
    },
  };
}
