import { useEffect, useState } from 'react';
import type { ViewGraph } from './collapse';
import { columnLayout, layoutGraph } from './layout';
import type { LayoutResult } from './layout';

export interface GraphLayout {
  result: LayoutResult;
  /** The drawn graph the layout was computed for: drawn together, so a stale layout stays coherent. */
  view: ViewGraph;
  key: string;
  version: number;
  /** How long the layout took (elk in its worker, including the round trip), for the bench and the curious. */
  ms: number;
  note?: string;
}

/**
 * Lay out the drawn graph in the elk worker whenever what is drawn changes (`key`). Until the new
 * layout arrives the previous one stays on screen, so an edit never blanks the graph; a layout for
 * another model is never shown.
 */
export function useGraphLayout(view: ViewGraph | undefined, key: string, model: string | undefined): GraphLayout | undefined {
  const [layout, setLayout] = useState<GraphLayout & { model?: string }>();
  useEffect(() => {
    if (!view) return;
    let cancelled = false;
    const input = { layers: view.nodes, stageOf: view.stageOf };
    const started = performance.now();
    const done = (result: LayoutResult, note?: string) =>
      !cancelled && setLayout((prev) => ({ result, view, key, model, version: (prev?.version ?? 0) + 1, ms: performance.now() - started, note }));
    layoutGraph(input).then(
      (result) => done(result),
      (error: unknown) => done(columnLayout(input), `Layout worker failed (${String(error)}); showing a simple column.`),
    );
    return () => {
      cancelled = true;
    };
    // `key` stands for the view's contents: re-layout only when what is drawn really changes.
  }, [key]);
  return layout && layout.model === model ? layout : undefined;
}
