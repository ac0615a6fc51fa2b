import { DATASET_FORMATS } from '../../../engine/data/datasetDescription';
import type { DatasetField } from '../../../engine/protocol/datasetInspect';
import { datasetChoiceOf, inspectionKey, type DataChoice, type DatasetFields as Fields } from '../store/dataChoice';
import { useStudio } from '../store/studioStore';
import { FieldIssues } from '../views/FieldIssues';
import { NumberField } from '../views/NumberField';
import { InspectionView } from './InspectionView';
import { useDatasetInspection } from './useDatasetInspection';

const FORMAT_LABELS: Record<(typeof DATASET_FORMATS)[number], string> = {
  csv: 'CSV table', tsv: 'TSV table', images: 'Image class folders', jsonl: 'JSON Lines', npz: 'NumPy .npz', npy: 'NumPy .npy folder',
};

/**
 * The Data section's "Dataset (file or folder)": the path (typed, picked in Electron, or a dropped file
 * the studio stored), the format (detected, or chosen), the columns of a table, the validation split,
 * how images are read — each with the inspection's diagnostics about it right under it — and what the
 * inspection found.
 */
export function DatasetFields({ data, edit }: { data: DataChoice; edit(fields: Partial<DataChoice>): void }) {
  useDatasetInspection();
  const model = useStudio((s) => s.model?.source?.modelFile ?? s.modelName ?? '');
  const d = data.dataset;
  const set = (fields: Partial<Fields>) => edit({ dataset: { ...d, ...fields } });
  const fields = datasetChoiceOf(data);
  const current = 'choice' in fields && data.inspected?.key === inspectionKey(fields.choice, data.loss, model);
  const inspection = current ? data.inspected?.inspection : undefined;
  const issues = (...which: DatasetField[]) => inspection?.diagnostics.filter((x) => which.includes(x.where.field as DatasetField));
  const format = d.format || inspection?.format;
  const table = format === 'csv' || format === 'tsv';
  const picker = window.shoal?.pickDataPath;
  const pick = async (what: 'file' | 'folder') => {
    const path = await picker?.(what);
    if (path) set({ source: path });
  };
  return (
    <div className="dataset-fields" data-testid="dataset-fields">
      <div className="field">
        <label className="field__label" htmlFor="dataset-source">
          File or folder on this machine
        </label>
        <div className="dataset-fields__path">
          <input
            id="dataset-source"
            data-testid="dataset-source"
            type="text"
            spellCheck={false}
            placeholder="/path/to/table.csv, images/, data.npz, dataset.json"
            value={d.source}
            aria-invalid={!d.source.trim() || !!issues('source', 'model')?.some((x) => x.severity === 'error')}
            onChange={(e) => set({ source: e.target.value })}
          />
          {picker && (
            <>
              <button type="button" className="button button--small" data-testid="dataset-pick-file" onClick={() => void pick('file')}>
                File…
              </button>
              <button type="button" className="button button--small" data-testid="dataset-pick-folder" onClick={() => void pick('folder')}>
                Folder…
              </button>
            </>
          )}
        </div>
        <FieldIssues issues={issues('source', 'model')} />
        {!picker && <div className="data-section__hint muted">Or drop a .csv, .tsv, .jsonl or .npz file on this section: the studio stores it in its data folder.</div>}
      </div>
      <div className="field-row">
        <div className="field">
          <label className="field__label" htmlFor="dataset-format">
            Format
          </label>
          <select id="dataset-format" data-testid="dataset-format" value={d.format} onChange={(e) => set({ format: e.target.value as Fields['format'] })}>
            <option value="">{`auto${!d.format && inspection?.format ? ` (${FORMAT_LABELS[inspection.format]})` : ''}`}</option>
            {DATASET_FORMATS.map((f) => (
              <option key={f} value={f}>
                {FORMAT_LABELS[f]}
              </option>
            ))}
          </select>
          <FieldIssues issues={issues('format')} />
        </div>
        <div className="field">
          <NumberField label="Validation split" testId="validation-split" value={data.validationSplit} min={0} max={0.9} step={0.05} integer={false} onChange={(v) => edit({ validationSplit: v })} />
          <FieldIssues issues={issues('validationSplit')} />
        </div>
      </div>
      {table && (
        <div className="field-row">
          <div className="field">
            <label className="field__label" htmlFor="dataset-label-column">
              Label column
            </label>
            <input id="dataset-label-column" data-testid="dataset-label-column" type="text" list="dataset-columns" spellCheck={false} placeholder={inspection?.columns?.at(-1) ? `auto: ${inspection.columns.at(-1)}` : 'auto: the last'} value={d.labelColumn} onChange={(e) => set({ labelColumn: e.target.value })} />
            <FieldIssues issues={issues('labelColumn')} />
          </div>
          <div className="field">
            <label className="field__label" htmlFor="dataset-feature-columns">
              Feature columns
            </label>
            <input id="dataset-feature-columns" data-testid="dataset-feature-columns" type="text" spellCheck={false} placeholder="auto: every numeric one" title="Column names separated by commas" value={d.featureColumns} onChange={(e) => set({ featureColumns: e.target.value })} />
            <FieldIssues issues={issues('featureColumns')} />
          </div>
          <datalist id="dataset-columns">
            {inspection?.columns?.map((c) => (
              <option key={c} value={c} />
            ))}
          </datalist>
        </div>
      )}
      {format === 'images' && (
        <div className="field-row field-row--3">
          <div className="field">
            <label className="field__label" htmlFor="dataset-pixels">
              Pixels
            </label>
            <select id="dataset-pixels" data-testid="dataset-pixels" value={d.pixels} title="unit: scaled to 0–1; byte: kept 0–255 for a model that rescales itself" onChange={(e) => set({ pixels: e.target.value as Fields['pixels'] })}>
              <option value="unit">0–1</option>
              <option value="byte">0–255</option>
            </select>
            <FieldIssues issues={issues('pixels')} />
          </div>
          <NumberField label="Height (0: model's)" testId="dataset-image-height" value={d.imageSize[0]} min={0} max={8192} onChange={(v) => set({ imageSize: [v, d.imageSize[1]] })} />
          <NumberField label="Width (0: model's)" testId="dataset-image-width" value={d.imageSize[1]} min={0} max={8192} onChange={(v) => set({ imageSize: [d.imageSize[0], v] })} />
          <FieldIssues issues={issues('imageSize')} />
        </div>
      )}
      {'choice' in fields && !current && <div className="muted" data-testid="dataset-inspecting">Inspecting the data…</div>}
      {current && data.inspected?.error && (
        <div className="field-issues__item--error" role="alert" data-testid="dataset-error">
          Could not inspect the data: {data.inspected.error}
        </div>
      )}
      {inspection && <InspectionView inspection={inspection} />}
    </div>
  );
}
