import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import type { ModelGraph } from '../../../engine/model/graph';
import { useEditor } from '../editor/editorStore';
import { EditorToolbar } from '../editor/EditorToolbar';
import { LayerMenu } from '../editor/LayerMenu';
import { stageMap, usePlan } from '../store/planState';
import { useStudio } from '../store/studioStore';
import { Inspector } from '../inspector/Inspector';
import { canCollapse, COLLAPSE_ABOVE, viewGraph } from './collapse';
import { FlowCanvas } from './FlowCanvas';
import type { Focus } from './FlowCanvas';
import './graph.css';
import { positions, useGraphKeys } from './graphKeys';
import { GraphSearch } from './GraphSearch';
import { GraphTooltip } from './GraphTooltip';
import { inspect, useGraphUi } from './graphUi';
import { NODE_HEIGHT, NODE_WIDTH, warmLayout } from './layout';
import { searchLayers, stepHit } from './search';
import { toEdges, toFlow } from './toFlow';
import { useGraphLayout } from './useGraphLayout';

/** A key per opened model: two files may hold models of one name, and each must be laid out afresh. */
const modelKeys = new WeakMap<ModelGraph, string>();
let opened = 0;
const modelKey = (model: ModelGraph) => modelKeys.get(model) ?? (modelKeys.set(model, `${++opened}:${model.name}`), `${opened}:${model.name}`);

const NONE: ReadonlySet<string> = new Set();
warmLayout();

/**
 * The layer graph of the open model, laid out top-down by elkjs with the plan's stages as framed
 * swimlanes, and edited in place. Hover a node for its full name, click it for the inspector, walk the
 * connections with the arrow keys; search unfolds the block that holds a match and centres it.
 */
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
  // Groups unfolded one by one while the rest stay folded: by a search match inside, a double click, the inspector.
  const [opened, setOpened] = useState<{ model?: ModelGraph; groups: ReadonlySet<string> }>({ groups: NONE });
  const openGroups = folded && opened.model === model ? opened.groups : NONE;
  const openGroup = useCallback(
    (group: string) => setOpened((prev) => (prev.model === model && prev.groups.has(group) ? prev : { model, groups: new Set([...(prev.model === model ? prev.groups : []), group]) })),
    [model],
  );
  const { stageOf } = state;
  const view = useMemo(() => (model ? viewGraph(model, stageOf, folded, openGroups) : undefined), [model, stageOf, folded, openGroups]);
  const mkey = model ? modelKey(model) : undefined;
  const key = useMemo(
    () => (model && view ? `${modelKey(model)}|${folded}|${[...openGroups].join('\u0000')}|${JSON.stringify([...view.stageOf.entries()])}` : ''),
    [model, view, folded, openGroups],
  );
  const layout = useGraphLayout(view, key, mkey);
  useEffect(() => inspect(undefined), [model]);
  const inspected = useGraphUi((s) => s.inspected);
  const inspectedNode = inspected ? layout?.view.nodes.find((n) => n.id === inspected) : undefined;

  // Where the view goes: a search match (zoomed to a readable size and centred) or a node reached by the keyboard (brought into view).
  const [target, setTarget] = useState<{ id: string; seq: number; mode: Focus['mode'] }>();
  const aim = useCallback((id: string, mode: Focus['mode']) => setTarget((t) => ({ id, mode, seq: (t?.seq ?? 0) + 1 })), []);
  useGraphKeys(layout?.view.nodes, layout?.result, useCallback((id: string) => aim(id, 'reveal'), [aim]));
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
  useEffect(() => {
    if (!current || !layout) return;
    // A match inside a folded block: unfold it; the match is focused once it is drawn on its own.
    const node = layout.view.nodes.find((n) => n.id === current.viewId);
    if (node?.kind === 'block') openGroup(node.group);
    aim(current.viewId, 'zoom');
    // Focus when the user searches or steps (seq) or the match is drawn anew, not when a relayout moves it.
  }, [search.seq, current?.viewId]);
  const focus = useMemo((): Focus | undefined => {
    const at = target && layout && positions(layout.result).get(target.id);
    return at && target ? { x: at.x + NODE_WIDTH / 2, y: at.y + NODE_HEIGHT / 2, seq: target.seq, mode: target.mode } : undefined;
  }, [target, layout]);

  const nodes = useMemo(() => {
    if (!layout) return undefined;
    return toFlow(layout.view.nodes, layout.result, (id) => params.get(id) ?? 0, { state, selection: selected, previewStageOf, dropStage, found, onOpenBlock: openGroup });
  }, [layout, params, state, selected, previewStageOf, dropStage, found, openGroup]);
  const edges = useMemo(() => layout && toEdges(layout.result), [layout]);

  return (
    <section
      ref={panel}
      className={`graph panel${inspectedNode ? ' graph--inspecting' : ''}`}
      data-testid="graph"
      aria-label="Layer graph"
      tabIndex={0}
      data-layout-ms={layout ? Math.round(layout.ms) : undefined}
      data-layout-nodes={layout?.view.nodes.length}
    >
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
          bounds={layout.result.bounds}
          onDropTarget={setDropStage}
          focus={focus}
        />
      )}
      {layout && <GraphTooltip nodes={layout.view.nodes} container={panel} />}
      {model && inspectedNode && (
        <Inspector
          node={inspectedNode}
          model={model}
          plan={state.plan}
          onClose={() => inspect(undefined)}
          onLayer={(id) => {
            if (inspectedNode.kind === 'block') openGroup(inspectedNode.group);
            inspect(id);
            aim(id, 'reveal');
          }}
        />
      )}
      {nodes && <GraphSearch open={search.open} query={search.query} hits={hits} index={current ? search.index : -1} onOpen={onSearchOpen} onQuery={onQuery} onStep={onStep} />}
      {preview && (
        <div className="graph__preview" data-testid="graph-preview">
          Previewing a suggestion: {preview.stages.length} stage{preview.stages.length > 1 ? 's' : ''} (layer colours) — Apply to edit it
        </div>
      )}
      {foldable && (
        <button type="button" className="button button--small graph__fold" data-testid="graph-fold" aria-pressed={folded} onClick={() => {
            setFold({ model, folded: !folded });
            setOpened({ groups: NONE });
          }}>
          {folded ? 'Show every layer' : 'Fold blocks'}
        </button>
      )}
      {layout?.note && <div className="graph__note">{layout.note}</div>}
      <LayerMenu />
    </section>
  );
}
