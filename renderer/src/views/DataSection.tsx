import { useState, type DragEvent } from 'react';
import { DATA_UPLOAD_NAME } from '../../../engine/protocol/datasetInspect';
import type { DataRef } from '../../../engine/protocol/trainingSetup';
import { DatasetFields } from '../data/DatasetFields';
import { uploadDroppedFile } from '../data/dropFiles';
import { DATA_KINDS, LOSS_NAMES, type DataChoice } from '../store/dataChoice';
import { isActive } from '../store/metrics';
import { useStudio } from '../store/studioStore';
import { FieldIssues } from './FieldIssues';
import { NumberField } from './NumberField';

/**
 * The plan panel's Data section: what Train trains on — the bundled MNIST digits (the built-in
 * models'), synthetic data of the model's shapes, a NumPy folder on this machine (its path typed,
 * with a validation split when it has no val/ folder), or a dataset file or folder that the Node side
 * inspects as it is typed (renderer/src/data/) — and the loss for outputs the model file gives none.
 * A data file dropped on the section is uploaded to the studio and becomes the dataset. The Node side
 * checks the data against the model before any process starts.
 */
export function DataSection() {
  const data = useStudio((s) => s.data);
  const set = useStudio((s) => s.set);
  const busy = useStudio((s) => !!s.job && isActive(s.job.metrics.state));
  const edit = (fields: Partial<DataChoice>) => set({ data: { ...useStudio.getState().data, ...fields } });
  const [drop, setDrop] = useState<{ over: boolean; note?: string; error?: string }>({ over: false });
  const lossIssues = data.kind === 'dataset' ? data.inspected?.inspection?.diagnostics.filter((d) => d.where.field === 'loss') : undefined;
  const hasFiles = (e: DragEvent) => [...e.dataTransfer.types].includes('Files');
  const onDrop = (e: DragEvent) => {
    const files = [...e.dataTransfer.files];
    setDrop((d) => ({ ...d, over: false }));
    // Data files only: a model.json dropped here goes on to the window's model drop.
    if (!hasFiles(e) || busy || !files.length || !files.every((f) => DATA_UPLOAD_NAME.test(f.name))) return;
    // Taken here: the window's model drop leaves a drop it sees prevented alone.
    e.preventDefault();
    setDrop({ over: false, note: `Uploading ${files.map((f) => f.name).join(', ')}…` });
    void uploadDroppedFile(files).then((result) => {
      if ('error' in result) return setDrop({ over: false, error: result.error });
      setDrop({ over: false });
      const now = useStudio.getState().data;
      edit({ kind: 'dataset', dataset: { ...now.dataset, source: result.path, format: '' } });
    });
  };
  return (
    <fieldset
      className={`data-section${drop.over ? ' data-section--drop' : ''}`}
      aria-label="Data"
      data-testid="data-section"
      disabled={busy}
      onDragOver={(e) => {
        if (!hasFiles(e) || busy) return;
        e.preventDefault();
        e.dataTransfer.dropEffect = 'copy';
        if (!drop.over) setDrop({ over: true });
      }}
      onDragLeave={(e) => {
        if (!e.currentTarget.contains(e.relatedTarget as Node | null)) setDrop((d) => ({ ...d, over: false }));
      }}
      onDrop={onDrop}
    >
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
          <FieldIssues issues={lossIssues} />
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
      {data.kind === 'dataset' && <DatasetFields data={data} edit={edit} />}
      {drop.note && <div className="muted" data-testid="data-drop-note">{drop.note}</div>}
      {drop.error && (
        <div className="field-issues__item--error" role="alert" data-testid="data-drop-error">
          {drop.error}
        </div>
      )}
      {data.kind === 'synthetic' && <NumberField label="Training samples" testId="synthetic-samples" value={data.samples} min={1} max={10_000_000} onChange={(v) => edit({ samples: v })} />}
    </fieldset>
  );
}
