import type { DataRef } from '../../../engine/protocol/trainingSetup';
import { DATA_KINDS, LOSS_NAMES, type DataChoice } from '../store/dataChoice';
import { isActive } from '../store/metrics';
import { useStudio } from '../store/studioStore';
import { NumberField } from './NumberField';

/**
 * The plan panel's Data section: what Train trains on — the bundled MNIST digits (the built-in
 * models'), synthetic data of the model's shapes, or a NumPy folder on this machine (its path typed,
 * with a validation split when it has no val/ folder) — and the loss for outputs the model file gives
 * none. The Node side checks the folder against the model before any process starts.
 */
export function DataSection() {
  const data = useStudio((s) => s.data);
  const set = useStudio((s) => s.set);
  const busy = useStudio((s) => !!s.job && isActive(s.job.metrics.state));
  const edit = (fields: Partial<DataChoice>) => set({ data: { ...useStudio.getState().data, ...fields } });
  return (
    <fieldset className="data-section" aria-label="Data" disabled={busy}>
      <legend className="field__label">Data</legend>
      <div className="field-row">
        <div className="field">
          <label className="field__label" htmlFor="data-kind">
            Source
          </label>
          <select id="data-kind" data-testid="data-kind" value={data.kind} onChange={(e) => edit({ kind: e.target.value as DataRef['kind'] })}>
            {DATA_KINDS.map((k) => (
              <option key={k.value} value={k.value}>
                {k.label}
              </option>
            ))}
          </select>
        </div>
        <div className="field">
          <label className="field__label" htmlFor="loss-picker">
            Loss
          </label>
          <select id="loss-picker" data-testid="loss-picker" value={data.loss} title="For outputs the model file gives no loss: auto takes the file's, else one inferred from the output" onChange={(e) => edit({ loss: e.target.value })}>
            <option value="">auto</option>
            {LOSS_NAMES.map((name) => (
              <option key={name} value={name}>
                {name}
              </option>
            ))}
          </select>
        </div>
      </div>
      {data.kind === 'npy' && (
        <>
          <div className="field">
            <label className="field__label" htmlFor="data-dir">
              Folder on this machine
            </label>
            <input
              id="data-dir"
              data-testid="data-dir"
              type="text"
              spellCheck={false}
              placeholder="/path/to/data"
              value={data.dir}
              aria-invalid={data.dir.trim() === ''}
              onChange={(e) => edit({ dir: e.target.value })}
            />
          </div>
          <NumberField label="Validation split (without val/)" testId="validation-split" value={data.validationSplit} min={0} max={0.9} step={0.05} integer={false} onChange={(v) => edit({ validationSplit: v })} />
          <div className="data-section__hint muted">x.npy and y.npy, or one &lt;layer&gt;.npy per input and output; a val/ subfolder is the validation set.</div>
        </>
      )}
      {data.kind === 'synthetic' && <NumberField label="Training samples" testId="synthetic-samples" value={data.samples} min={1} max={10_000_000} onChange={(v) => edit({ samples: v })} />}
    </fieldset>
  );
}
