import { create } from 'zustand';

/**
 * What the graph view shows over the canvas: the node under the pointer (its tooltip) and the node open
 * in the inspector. A store rather than props, so that a node view can set them without every node
 * rendering again when they change.
 */
export interface GraphUi {
  /** Drawn node id under the pointer and its box on screen. */
  hovered?: { id: string; rect: { left: number; top: number; right: number; bottom: number } };
  /** Drawn node id (a layer or a folded block) shown in the inspector. */
  inspected?: string;
}

export const useGraphUi = create<GraphUi>()(() => ({}));

export const hover = (id: string, el: Element) => {
  const r = el.getBoundingClientRect();
  useGraphUi.setState({ hovered: { id, rect: { left: r.left, top: r.top, right: r.right, bottom: r.bottom } } });
};
export const unhover = (id?: string) => useGraphUi.setState((s) => (!s.hovered || (id && s.hovered.id !== id) ? s : { hovered: undefined }));
export const inspect = (id: string | undefined) => useGraphUi.setState({ inspected: id });

/**
 * A name that fits a node (22 characters of its bold title): the start and the end of a long name around an ellipsis, so that names
 * which differ only at the end ("embedding_Embedding1" and "embedding_Embedding1_input") still differ.
 */
export function shortName(name: string, max = 22): string {
  if (name.length <= max) return name;
  const tail = Math.ceil((max - 1) * 0.45);
  return `${name.slice(0, max - 1 - tail)}…${name.slice(name.length - tail)}`;
}
