import { useEffect } from 'react';
import type { RefObject } from 'react';

/**
 * Close a popup (a menu, a sheet) the way desktop popups close: Escape, or a press anywhere outside
 * it. `inside` may list more elements that count as the popup (its opening button, so that the
 * button's own click toggles it instead of closing and reopening it). Escape is taken here (capture
 * phase, stopped) so that it closes only the popup, not also the view under it.
 */
export function useDismiss(open: boolean, close: () => void, ...inside: Array<RefObject<HTMLElement | null>>): void {
  useEffect(() => {
    if (!open) return;
    const onKeyDown = (e: KeyboardEvent) => {
      if (e.key !== 'Escape') return;
      e.preventDefault();
      e.stopImmediatePropagation();
      close();
    };
    const onPointerDown = (e: PointerEvent) => {
      const target = e.target as Node | null;
      if (target && inside.some((ref) => ref.current?.contains(target))) return;
      close();
    };
    window.addEventListener('keydown', onKeyDown, true);
    window.addEventListener('pointerdown', onPointerDown, true);
    return () => {
      window.removeEventListener('keydown', onKeyDown, true);
      window.removeEventListener('pointerdown', onPointerDown, true);
    };
    // The refs are stable; `close` may be a fresh closure each render, which is fine to re-bind.
  }, [open, close, ...inside]);
}
