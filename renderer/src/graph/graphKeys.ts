import { useEffect, useRef } from 'react';
import { setSelection, useEditor } from '../editor/editorStore';
import type { ViewNode } from './collapse';
import { inspect, useGraphUi } from './graphUi';
import { NODE_HEIGHT, NODE_WIDTH } from './layout';
import type { LayoutResult } from './layout';

export type Direction = 'up' | 'down' | 'left' | 'right';

/** Absolute top-left corners of the drawn nodes. */
export function positions(layout: LayoutResult): Map<string, { x: number; y: number }> {
  const frames = new Map(layout.stages.map((s) => [s.stage, s]));
  return new Map(
    layout.layers.map((l) => {
      const frame = l.stage === undefined ? undefined : frames.get(l.stage);
      return [l.id, { x: l.x + (frame?.x ?? 0), y: l.y + (frame?.y ?? 0) }];
    }),
  );
}

/**
 * The node a key moves to from `from`, along the graph's connections: down to the layer it feeds and up
 * to the layer that feeds it (the one straight below or above when there are several: the main path),
 * left and right to the nearest node in the same row (a parallel branch). Undefined: nowhere to go.
 */
export function neighbour(nodes: readonly ViewNode[], at: Map<string, { x: number; y: number }>, from: string, direction: Direction): string | undefined {
  const here = at.get(from);
  const node = nodes.find((n) => n.id === from);
  if (!here || !node) return undefined;
  const closest = (ids: string[]) =>
    ids
      .filter((id) => at.has(id))
      .sort((a, b) => Math.abs(at.get(a)!.x - here.x) - Math.abs(at.get(b)!.x - here.x) || Math.abs(at.get(a)!.y - here.y) - Math.abs(at.get(b)!.y - here.y))[0];
  if (direction === 'up') return closest(node.inputs);
  if (direction === 'down') return closest(nodes.filter((n) => n.inputs.includes(from)).map((n) => n.id));
  const side = direction === 'left' ? -1 : 1;
  const row = [...at.entries()].filter(([id, p]) => id !== from && Math.abs(p.y - here.y) < NODE_HEIGHT && (p.x - here.x) * side >= NODE_WIDTH / 2);
  return row.sort((a, b) => Math.abs(a[1].x - here.x) - Math.abs(b[1].x - here.x))[0]?.[0];
}

const isTyping = (target: EventTarget | null) => {
  const el = target as HTMLElement | null;
  return !!el && (el.tagName === 'INPUT' || el.tagName === 'SELECT' || el.tagName === 'TEXTAREA' || el.isContentEditable);
};

const KEYS: Record<string, Direction> = { ArrowUp: 'up', ArrowDown: 'down', ArrowLeft: 'left', ArrowRight: 'right' };

/**
 * The graph's keyboard: the arrow keys walk the connections from the selected node (selecting the node
 * they reach, and the inspector follows when open), Enter opens the inspector on it, Escape closes the
 * inspector. Listens before the stage editor's shortcuts (capture phase) and marks the keys it handles,
 * so that the editor leaves them alone; Shift+arrows stay the editor's (extend the selection).
 */
export function useGraphKeys(nodes: readonly ViewNode[] | undefined, layout: LayoutResult | undefined, reveal: (id: string) => void): void {
  const state = useRef({ nodes, layout, reveal });
  state.current = { nodes, layout, reveal };
  useEffect(() => {
    const onKeyDown = (e: KeyboardEvent) => {
      const { nodes, layout, reveal } = state.current;
      if (!nodes || !layout || e.defaultPrevented || isTyping(e.target) || e.ctrlKey || e.metaKey || e.altKey || e.shiftKey) return;
      const { selection, menu } = useEditor.getState();
      if (menu) return;
      const inspected = useGraphUi.getState().inspected;
      const current = nodes.find((n) => (n.kind === 'layer' ? selection.includes(n.layer.id) : n.layers.some((l) => selection.includes(l.id))));
      if (e.key === 'Escape' && inspected) {
        inspect(undefined);
        e.preventDefault();
        return;
      }
      const target = e.target as HTMLElement | null;
      // Enter on a button or a link is theirs; on the page or the canvas it opens the inspector.
      const onCanvas = !target || target === document.body || (!!target.closest?.('.graph') && !target.closest?.('button, a, [role="button"]'));
      if (e.key === 'Enter' && current && onCanvas) {
        inspect(current.id);
        e.preventDefault();
        return;
      }
      const direction = KEYS[e.key];
      const inGraph = !!(e.target as HTMLElement | null)?.closest?.('.graph');
      if (!direction || (!current && !inGraph && selection.length === 0)) return;
      e.preventDefault();
      const at = positions(layout);
      const next = current ? neighbour(nodes, at, current.id, direction) : [...at.entries()].sort((a, b) => a[1].y - b[1].y || a[1].x - b[1].x)[0]?.[0];
      const node = next === undefined ? undefined : nodes.find((n) => n.id === next);
      if (!node) return;
      const ids = node.kind === 'layer' ? [node.layer.id] : node.layers.map((l) => l.id);
      setSelection(ids, ids[0]);
      if (inspected) inspect(node.id);
      reveal(node.id);
    };
    window.addEventListener('keydown', onKeyDown, true);
    return () => window.removeEventListener('keydown', onKeyDown, true);
  }, []);
}
