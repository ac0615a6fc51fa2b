import type { ReactNode } from 'react';
import type { LayerNode, ModelGraph } from '../../../engine/model/graph';
import type { Plan } from '../../../engine/plan/plan';
import { formatBytes, formatCompact, formatCount, formatShape } from '../format';
import type { ViewNode } from '../graph/collapse';
import { layerClass } from '../graph/LayerNodeView';
import { stageColor } from '../graph/stageColors';
import './inspector.css';
import { layerWeights, weightSize } from './weights';

interface Props {
  node: ViewNode;
  model: ModelGraph;
  plan?: Plan;
  onClose(): void;
  /** Show one of a folded block's layers (unfolds the block). */
  onLayer(layerId: string): void;
}

const flops = (n: number) => `${formatCompact(n)}FLOP`.replace(/(\d) ?([kMG]?)FLOP$/, '$1 $2FLOP');

function Row({ label, children, testId }: { label: string; children: ReactNode; testId?: string }) {
  return (
    <>
      <dt>{label}</dt>
      <dd data-testid={testId}>{children}</dd>
    </>
  );
}

/** A spec's fields other than its kind, as "name: value" lines (nested specs as JSON). */
function config(layer: LayerNode): Array<[string, string]> {
  const show = (v: unknown): string => (Array.isArray(v) ? (v.every((x) => typeof x === 'number') ? v.join('×') : JSON.stringify(v)) : typeof v === 'object' && v !== null ? JSON.stringify(v) : String(v));
  return Object.entries(layer.spec)
    .filter(([key, value]) => key !== 'kind' && value !== undefined)
    .map(([key, value]) => [key, show(value)]);
}

function StageRow({ stage, plan }: { stage?: number; plan?: Plan }) {
  if (stage === undefined) return <Row label="Stage">not in the plan</Row>;
  const s = plan?.stages[stage];
  return (
    <Row label="Stage" testId="inspector-stage">
      <span className="inspector__chip" style={{ backgroundColor: stageColor(stage) }} aria-hidden="true" />
      Stage {stage}
      {s ? ` · ${s.dataParallel} replica${s.dataParallel > 1 ? 's' : ''}${(s.tensorParallel ?? 1) > 1 ? ` × ${s.tensorParallel} shards` : ''}` : ''}
    </Row>
  );
}

function LayerDetails({ layer, model, plan }: { layer: LayerNode; model: ModelGraph; plan?: Plan }) {
  const byId = new Map(model.layers.map((l) => [l.id, l]));
  const inputs = layer.inputs.map((id) => byId.get(id)).filter((l): l is LayerNode => !!l);
  const weights = layerWeights(layer, inputs.map((l) => l.outputShape));
  const stage = plan?.stages.findIndex((s) => s.layers.includes(layer.id));
  const sharding = plan?.sharding[layer.id];
  const tensorParallel = stage !== undefined && stage >= 0 ? (plan?.stages[stage].tensorParallel ?? 1) : 1;
  const rows = config(layer);
  return (
    <>
      <dl className="inspector__facts">
        <Row label="Class" testId="inspector-class">
          {layerClass(layer)}
        </Row>
        {layer.group && <Row label="Block">{layer.group}</Row>}
        <StageRow stage={stage !== undefined && stage >= 0 ? stage : undefined} plan={plan} />
        <Row label="Sharding" testId="inspector-sharding">
          {sharding ? `weight ${sharding.weight}${sharding.output ? ` · output ${sharding.output}` : ''} over ${tensorParallel} device${tensorParallel > 1 ? 's' : ''}` : 'replicated (B)'}
        </Row>
        <Row label="Output" testId="inspector-output">
          {formatShape(layer.outputShape)}
        </Row>
        <Row label="FLOPs / sample" testId="inspector-flops">
          {flops(layer.forwardFlops)} forward · {flops(layer.backwardFlops)} backward
        </Row>
        <Row label="Activation / sample" testId="inspector-activation">
          {formatBytes(layer.activationBytes)}
        </Row>
      </dl>
      <h3 className="inspector__heading">Inputs</h3>
      {inputs.length === 0 ? (
        <p className="inspector__none">none (a model input)</p>
      ) : (
        <ul className="inspector__list" data-testid="inspector-inputs">
          {inputs.map((l) => (
            <li key={l.id}>
              <span className="inspector__name">{l.id}</span> <span className="inspector__mono">{formatShape(l.outputShape)}</span>
            </li>
          ))}
        </ul>
      )}
      <h3 className="inspector__heading">Configuration</h3>
      {rows.length === 0 ? (
        <p className="inspector__none">no options</p>
      ) : (
        <dl className="inspector__facts inspector__mono" data-testid="inspector-config">
          {rows.map(([key, value]) => (
            <Row key={key} label={key}>
              {value}
            </Row>
          ))}
        </dl>
      )}
      <h3 className="inspector__heading">
        Parameters · {formatCount(layer.params)}
        {layer.nonTrainableParams ? ` + ${formatCount(layer.nonTrainableParams)} non-trainable` : ''}
      </h3>
      {weights && weights.length > 0 ? (
        <table className="inspector__weights" data-testid="inspector-weights">
          <tbody>
            {weights.map((w) => (
              <tr key={w.name} data-weight={w.name}>
                <td>{w.name}</td>
                <td className="inspector__mono">{formatShape(w.shape)}</td>
                <td className="inspector__mono inspector__num">{formatCount(weightSize(w.shape))}</td>
                <td className="inspector__none">{w.trainable ? '' : 'frozen'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : (
        <p className="inspector__none">{layer.params + layer.nonTrainableParams === 0 ? 'none' : 'weight shapes not known for this layer'}</p>
      )}
    </>
  );
}

function BlockDetails({ node, plan, onLayer }: { node: Extract<ViewNode, { kind: 'block' }>; plan?: Plan; onLayer(id: string): void }) {
  const sum = (f: (l: LayerNode) => number) => node.layers.reduce((s, l) => s + f(l), 0);
  const stage = plan?.stages.findIndex((s) => s.layers.includes(node.layers[0].id));
  return (
    <>
      <dl className="inspector__facts">
        <Row label="Class">folded block · {node.layers.length} layers</Row>
        <StageRow stage={stage !== undefined && stage >= 0 ? stage : undefined} plan={plan} />
        <Row label="Output">{formatShape(node.layers[node.layers.length - 1].outputShape)}</Row>
        <Row label="Parameters">{formatCount(sum((l) => l.params))}</Row>
        <Row label="FLOPs / sample">{flops(sum((l) => l.forwardFlops))} forward</Row>
        <Row label="Activations / sample">{formatBytes(sum((l) => l.activationBytes))}</Row>
      </dl>
      <h3 className="inspector__heading">Layers</h3>
      <ul className="inspector__list" data-testid="inspector-layers">
        {node.layers.map((l) => (
          <li key={l.id}>
            <button type="button" className="inspector__link" onClick={() => onLayer(l.id)} title="Unfold the block and inspect this layer">
              {l.id}
            </button>{' '}
            <span className="inspector__mono">{layerClass(l)}</span>
          </li>
        ))}
      </ul>
    </>
  );
}

/**
 * The layer inspector: a side panel over the graph with everything known about the clicked layer —
 * class, configuration, input and output shapes, weights with their shapes, FLOPs, activation bytes,
 * stage and sharding — or a folded block's totals and layers. Escape or × closes it.
 */
export function Inspector({ node, model, plan, onClose, onLayer }: Props) {
  const name = node.kind === 'layer' ? node.layer.id : node.group;
  return (
    <aside className="inspector" data-testid="inspector" aria-label={`Inspector: ${name}`}>
      <header className="inspector__head">
        <h2 className="inspector__title" data-testid="inspector-name">
          {name}
        </h2>
        <button type="button" className="button button--small" aria-label="Close the inspector" data-testid="inspector-close" onClick={onClose}>
          ×
        </button>
      </header>
      <div className="inspector__body">{node.kind === 'layer' ? <LayerDetails layer={node.layer} model={model} plan={plan} /> : <BlockDetails node={node} plan={plan} onLayer={onLayer} />}</div>
    </aside>
  );
}
