import { useMemo, useRef, useState } from 'react';
import type { ModelGraph } from '../../../engine/model/graph';
import { useEditor } from '../editor/editorStore';
import { EditorToolbar } from '../editor/EditorToolbar';
import { LayerMenu } from '../editor/LayerMenu';
import { stageMap, usePlan } from '../store/planState';
import { useStudio } from '../store/studioStore';
import { canCollapse, COLLAPSE_ABOVE, viewGraph } from './collapse';
import { FlowCanvas } from './FlowCanvas';
import { toFlow } from './toFlow';
import { useGraphLayout } from './useGraphLayout';

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
  const key = useMemo(() => (model && view ? `${model.name}|${folded}|${JSON.stringify([...view.stageOf.entries()])}` : ''), [model, view, folded]);
  const layout = useGraphLayout(view, key, model?.name, panel);
  const params = useMemo(() => new Map(model?.layers.map((l) => [l.id, l.params]) ?? []), [model]);
  const selected = useMemo(() => new Set(selection), [selection]);
  const previewStageOf = useMemo(() => (preview ? stageMap(preview) : undefined), [preview]);

  const flow = useMemo(() => {
    if (!layout) return undefined;
    return toFlow(layout.view.nodes, layout.result, (id) => params.get(id) ?? 0, { state, selection: selected, previewStageOf, dropStage });
  }, [layout, params, state, selected, previewStageOf, dropStage]);

  return (
    <section ref={panel} className="graph panel" data-testid="graph" aria-label="Layer graph">
      {!model && <div className="empty">Pick a model to see its layers.</div>}
      {model && !flow && <div className="empty">Laying out {model.layers.length} layers…</div>}
      {model && <EditorToolbar />}
      {flow && layout && (
        <FlowCanvas
          nodes={flow.nodes}
          edges={flow.edges}
          fitKey={`${model?.name}|${folded}|${layout.result.stages.length}`}
          version={layout.version}
          stages={layout.result.stages}
          onDropTarget={setDropStage}
        />
      )}
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
