import type { ClassBalance, DatasetInspection, FeedCheck } from '../../../engine/protocol/datasetInspect';

/** Classes shown as bars; the rest are summed in one line (a vocabulary-sized label is not a chart). */
const MAX_BARS = 20;

const shape = (s: number[] | undefined) => (s ? `(${s.map((d) => (d < 0 ? 'any' : d)).join(', ')})` : '?');

/**
 * What the Node side found in the dataset: its counts, each model input and output against the data,
 * the class balance, and a few samples (thumbnails of images, the first rows of a table).
 */
export function InspectionView({ inspection }: { inspection: DatasetInspection }) {
  const { counts, feeds, classes, samples } = inspection;
  return (
    <div className="dataset-inspection" data-testid="dataset-inspection">
      <div className="dataset-inspection__summary" data-testid="dataset-summary">
        <span className="dataset-inspection__format">{inspection.format ?? 'unknown format'}</span>
        {counts ? (
          <span data-testid="dataset-counts">
            {counts.train} training · {counts.validation} validation samples
          </span>
        ) : (
          <span className="muted">not opened against the model</span>
        )}
      </div>
      {feeds.length > 0 && <FeedTable feeds={feeds} />}
      {classes.map((c) => (
        <ClassBars key={c.output} balance={c} samples={counts ? counts.train + counts.validation : c.counted} />
      ))}
      {samples.kind === 'images' && (
        <div className="dataset-thumbs" data-testid="dataset-thumbnails">
          {samples.images.map((img, i) => (
            <figure key={i} className="dataset-thumbs__item" title={`${img.label}/${img.file}`}>
              <img src={img.dataUrl} width={img.width} height={img.height} alt={`${img.label}: ${img.file}`} data-testid="dataset-thumbnail" />
              <figcaption>{img.label}</figcaption>
            </figure>
          ))}
        </div>
      )}
      {samples.kind === 'table' && samples.rows.length > 0 && (
        <div className="dataset-rows">
          <table className="dataset-rows__table" data-testid="dataset-rows">
            <thead>
              <tr>
                {samples.columns.map((c) => (
                  <th key={c}>{c}</th>
                ))}
              </tr>
            </thead>
            <tbody>
              {samples.rows.map((row, r) => (
                <tr key={r}>
                  {row.map((v, c) => (
                    <td key={c}>{v}</td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </div>
  );
}

function FeedTable({ feeds }: { feeds: FeedCheck[] }) {
  return (
    <table className="dataset-feeds" data-testid="dataset-feeds">
      <thead>
        <tr>
          <th>Model</th>
          <th>takes</th>
          <th>data gives</th>
        </tr>
      </thead>
      <tbody>
        {feeds.map((f) => (
          <tr key={`${f.side}:${f.layer}`} className={`dataset-feeds__row dataset-feeds__row--${f.status}`} data-testid="dataset-feed" data-status={f.status}>
            <td>
              {f.side} {f.layer}
            </td>
            <td>{shape(f.modelShape)}</td>
            <td>{f.status === 'match' ? `${shape(f.dataShape)} ✓` : f.status === 'mismatch' ? 'does not fit ✗' : '—'}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function ClassBars({ balance, samples }: { balance: ClassBalance; samples: number }) {
  const order = balance.names.map((name, i) => ({ name, count: balance.counts[i] }));
  const shown = order.length > MAX_BARS ? [...order].sort((a, b) => b.count - a.count).slice(0, MAX_BARS) : order;
  const rest = order.length - shown.length;
  const max = Math.max(1, ...shown.map((c) => c.count));
  return (
    <div className="dataset-classes" data-testid="dataset-classes" aria-label={`Class balance of ${balance.output}`}>
      <div className="dataset-classes__title muted">
        Classes of {balance.output} ({balance.names.length}){balance.counted < samples ? `, counted over the first ${balance.counted} of ${samples} samples` : ''}
      </div>
      {shown.map((c) => (
        <div key={c.name} className="dataset-classes__row" data-testid="dataset-class" data-class={c.name}>
          <span className="dataset-classes__name">{c.name}</span>
          <span className="dataset-classes__bar">
            <span style={{ width: `${(100 * c.count) / max}%` }} />
          </span>
          <span className="dataset-classes__count">{c.count}</span>
        </div>
      ))}
      {rest > 0 && <div className="muted">… and {rest} smaller classes</div>}
    </div>
  );
}
