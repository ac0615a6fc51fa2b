import { chooseModel, useModelFiles } from '../model/modelFiles';
import { OpenModelButton } from '../model/ModelFileControls';
import { useStudio } from '../store/studioStore';
import { formatCompact } from '../format';
import { isActive } from '../store/metrics';

/** The title bar: the model picker and what the studio is connected to. */
export function Header() {
  const models = useStudio((s) => s.models);
  const modelName = useStudio((s) => s.modelName);
  const model = useStudio((s) => s.model);
  const info = useStudio((s) => s.info);
  const busy = useStudio((s) => !!s.job && isActive(s.job.metrics.state));
  const entry = models.find((m) => m.name === modelName);
  const imported = useModelFiles((s) => s.imported);
  const fromFile = imported && imported.key === modelName ? imported : undefined;
  return (
    <header className="header">
      <div className="brand" aria-label="Shoal">
        <span className="brand__mark" aria-hidden="true" />
        Shoal
      </div>
      <label className="field field--inline">
        <span className="field__label">Model</span>
        <select
          data-testid="model-picker"
          value={modelName ?? ''}
          disabled={models.length === 0 || busy}
          onChange={(e) => chooseModel(e.target.value)}
        >
          {models.length === 0 && <option value="">Loading…</option>}
          {models.map((m) => (
            <option key={m.name} value={m.name}>
              {m.name}
            </option>
          ))}
          {imported && <option value={imported.key}>{imported.fileName} (file)</option>}
        </select>
      </label>
      <OpenModelButton disabled={busy} />
      {fromFile && (
        <div className="header__model" data-testid="imported-model">
          <span>{fromFile.graph.description}</span>
          <span className="muted">
            {fromFile.graph.layers.length} layers · {formatCompact(fromFile.graph.layers.reduce((sum, l) => sum + l.params, 0))} params
          </span>
        </div>
      )}
      {entry && (
        <div className="header__model">
          <span>{entry.description}</span>
          <span className="muted">
            {model?.layers.length ?? entry.layers} layers · {formatCompact(entry.params)} params
          </span>
        </div>
      )}
      <div className="header__right muted">
        {info ? `${info.shell === 'web' ? 'Browser shell' : 'Desktop'} · ${info.cores} cores · v${info.version}` : ''}
      </div>
    </header>
  );
}
