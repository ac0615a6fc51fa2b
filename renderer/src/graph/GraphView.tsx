import { useCallback, useMemo, useRef, useState } from 'react';
import type { ModelGraph } from '../../../engine/model/graph';
import { useEditor } from '../editor/editorStore';
import { EditorToolbar } from '../editor/EditorToolbar';
import { LayerMenu } from '../editor/LayerMenu';
import { stageMap, usePlan } from '../store/planState';
import { useStudio } from '../store/studioStore';
import { canCollapse, COLLAPSE_ABOVE, viewGraph } from './collapse';
import { FlowCanvas } from './FlowCanvas';
import { GraphSearch } from './GraphSearch';
import { NODE_HEIGHT, NODE_WIDTH } from './layout';
import { searchLayers, stepHit } from './search';
import { toEdges, toFlow } from './toFlow';
import { useGraphLayout } from './useGraphLayout';

/** A key per opened model: two files may hold models of one name, and each must be laid out afresh. */
const modelKeys = new WeakMap<ModelGraph, string>();
let opened = 0;
const modelKey = (model: ModelGraph) => modelKeys.get(model) ?? (modelKeys.set(model, `${++opened}:${model.name}`), `${opened}:${model.name}`);

/** The layer graph of the open model, laid out by elkjs, grouped into the plan's stages, and edited in place. */
export function GraphView() {
  const model = useStudio((s) => s.model);
  const state = usePlan();
  const selection = useEditor((s) => s.selection);
  const preview = useEditor((s) => s.preview);
  const [fold, setFold] = useState<{ model: ModelGraph; folded: boolean }>();
  const [dropStage, setDropStage] = useState<number>();
  const panel = useRef<HTMLElement>(null);

  const foldable = !!model && canCollapse(model);
  const folded = foldable && (fold?.model === model ? fold.folded : model.layers.length > COLLAPSE_ABOVE);
  const { stageOf } = state;
  const view = useMemo(() => (model ? viewGraph(model, stageOf, folded) : undefined), [model, stageOf, folded]);
  const mkey = model ? modelKey(model) : undefined;
  const key = useMemo(() => (model && view ? `${modelKey(model)}|${folded}|${JSON.stringify([...view.stageOf.entries()])}` : ''), [model, view, folded]);
  const layout = useGraphLayout(view, key, mkey, panel);
  const params = useMemo(() => new Map(model?.layers.map((l) => [l.id, l.params]) ?? []), [model]);
  const selected = useMemo(() => new Set(selection), [selection]);
  const previewStageOf = useMemo(() => (preview ? stageMap(preview) : undefined), [preview]);

  // Search: the matches among what is drawn; every query change or Enter bumps `seq`, which focuses the match.
  const [search, setSearch] = useState({ open: false, query: '', index: -1, seq: 0 });
  const hits = useMemo(() => (layout && search.open ? searchLayers(layout.view.nodes, search.query) : []), [layout, search.open, search.query]);
  const current = search.index >= 0 ? hits[search.index] : undefined;
  const onSearchOpen = useCallback((open: boolean) => setSearch((s) => (s.open === open ? s : { ...s, open, index: open ? s.index : -1 })), []);
  const onQuery = (query: string) => setSearch((s) => ({ ...s, query, index: 0, seq: s.seq + 1 }));
  const onStep = (step: 1 | -1) => setSearch((s) => ({ ...s, index: stepHit(s.index, hits.length, step), seq: s.seq + 1 }));
  const found = useMemo(() => (hits.length ? { matches: new Set(hits.map((h) => h.viewId)), current: current?.viewId } : undefined), [hits, current]);
  const focus = useMemo(() => {
    const pos = current && layout?.result.layers.find((l) => l.id === current.viewId);
    if (!pos || !layout) return undefined;
    const box = pos.stage === undefined ? undefined : layout.result.stages.find((b) => b.stage === pos.stage);
    return { x: pos.x + (box?.x ?? 0) + NODE_WIDTH / 2, y: pos.y + (box?.y ?? 0) + NODE_HEIGHT / 2, seq: search.seq };
    // Focus when the user searches or steps (seq), not when a relayout moves the match.
  }, [search.seq, current?.viewId]);

  const nodes = useMemo(() => {
    if (!layout) return undefined;
    return toFlow(layout.view.nodes, layout.result, (id) => params.get(id) ?? 0, { state, selection: selected, previewStageOf, dropStage, found });
  }, [layout, params, state, selected, previewStageOf, dropStage, found]);
  const edges = useMemo(() => layout && toEdges(layout.view.nodes, layout.result), [layout]);

  return (
    <section ref={panel} className="graph panel" data-testid="graph" aria-label="Layer graph" data-layout-ms={layout ? Math.round(layout.ms) : undefined} data-layout-nodes={layout?.view.nodes.length}>
      {!model && <div className="empty">Pick a model to see its layers.</div>}
      {model && !nodes && <div className="empty">Laying out {model.layers.length} layers…</div>}
      {model && <EditorToolbar />}
      {nodes && edges && layout && (
        <FlowCanvas
          nodes={nodes}
          edges={edges}
          fitKey={`${mkey}|${folded}|${layout.result.stages.length}`}
          version={layout.version}
          stages={layout.result.stages}
          onDropTarget={setDropStage}
          focus={focus}
        />
      )}
      {nodes && <GraphSearch open={search.open} query={search.query} hits={hits} index={current ? search.index : -1} onOpen={onSearchOpen} onQuery={onQuery} onStep={onStep} />}
      {preview && (
        <div className="graph__preview" data-testid="graph-preview">
          Previewing a suggestion: {preview.stages.length} stage{preview.stages.length > 1 ? 's' : ''} (layer colours) — Apply to edit it
        </div>
      )}
      {foldable && (
        <button type="button" className="button button--small graph__fold" data-testid="graph-fold" aria-pressed={folded} onClick={() => setFold({ model, folded: !folded })}>
          {folded ? 'Show every layer' : 'Fold blocks'}
        </button>
      )}
      {layout?.note && <div className="graph__note">{layout.note}</div>}
      <LayerMenu />
    </section>
  );
}
