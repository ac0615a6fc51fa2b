import { useEffect } from 'react';
import { mergeNext, moveBy, splitAt } from './commands';
import { openMenu, redo, setSelection, undo, useEditor } from './editorStore';
import { stepSelection } from './selection';

/**
 * The stage editor's keyboard: Ctrl+Z / Ctrl+Shift+Z (or Ctrl+Y) undo and redo; on the selected
 * layers `[` and `]` move them to the previous / next stage, S splits the stage before them, M merges
 * their stage with the next, ↑ ↓ walk the layers (shift extends), Shift+F10 or the menu key opens
 * the context menu, Escape clears the selection. Keys typed into a form field are left alone.
 */
export const EDITOR_SHORTCUTS: ReadonlyArray<{ keys: string; what: string }> = [
  { keys: 'Ctrl+Z', what: 'Undo' },
  { keys: 'Ctrl+Shift+Z / Ctrl+Y', what: 'Redo' },
  { keys: '[  ]', what: 'Move the selected layers to the previous / next stage' },
  { keys: 'S', what: 'Split the stage before the selected layers' },
  { keys: 'M', what: "Merge the selected layers' stage with the next" },
  { keys: '↑  ↓', what: 'Select the previous / next layer (Shift extends)' },
  { keys: 'Shift+F10 / Menu', what: 'Open the context menu of the selection' },
  { keys: 'Escape', what: 'Clear the selection' },
];

export const SHORTCUT_HELP = 'Ctrl+Z undo · Ctrl+Shift+Z redo · [ ] move to previous/next stage · S split · M merge · ↑↓ select · Shift+F10 menu';

function isTyping(target: EventTarget | null): boolean {
  const el = target as HTMLElement | null;
  return !!el && (el.tagName === 'INPUT' || el.tagName === 'SELECT' || el.tagName === 'TEXTAREA' || el.isContentEditable);
}

const inGraph = (target: EventTarget | null) => !!(target as HTMLElement | null)?.closest?.('.graph');

function openMenuAtSelection(ids: string[]): void {
  const node = document.querySelector(`[data-layer="${CSS.escape(ids[0])}"], [data-layers~="${CSS.escape(ids[0])}"]`);
  const box = node?.getBoundingClientRect();
  openMenu({ ids, x: box ? box.left + 24 : window.innerWidth / 2, y: box ? box.bottom - 8 : window.innerHeight / 2 });
}

export function useEditorShortcuts(): void {
  useEffect(() => {
    const onKeyDown = (e: KeyboardEvent) => {
      if (isTyping(e.target) || e.defaultPrevented) return;
      const { selection, menu } = useEditor.getState();
      if (menu) return;
      const mod = e.ctrlKey || e.metaKey;
      const key = e.key.toLowerCase();
      let handled = true;
      if (mod && key === 'z') (e.shiftKey ? redo : undo)();
      else if (mod && key === 'y') redo();
      else if (mod || e.altKey) handled = false;
      else if ((e.key === 'ArrowDown' || e.key === 'ArrowUp') && (selection.length > 0 || inGraph(e.target))) stepSelection(e.key === 'ArrowDown' ? 1 : -1, e.shiftKey);
      else if (selection.length === 0) handled = false;
      else if (e.key === ']') moveBy(selection, 1);
      else if (e.key === '[') moveBy(selection, -1);
      else if (key === 's') splitAt(selection);
      else if (key === 'm') mergeNext(selection);
      else if (e.key === 'Escape') setSelection([]);
      else if (e.key === 'ContextMenu' || (e.key === 'F10' && e.shiftKey)) openMenuAtSelection(selection);
      else handled = false;
      if (handled) e.preventDefault();
    };
    window.addEventListener('keydown', onKeyDown);
    return () => window.removeEventListener('keydown', onKeyDown);
  }, []);
}
