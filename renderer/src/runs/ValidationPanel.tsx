import type { CSSProperties } from 'react';
import type { Confusion } from '../../../engine/protocol/evaluation';
import type { RunDetail } from '../../../engine/protocol/runs';
import { formatMetric, formatPercent } from '../format';
import './confusion.css';

const pct = (x: number | null) => (x === null ? '—' : formatPercent(x));

/** Per-class accuracy beside each true class's row of counts; each cell shaded by its share of the row. */
export function ConfusionMatrix({ confusion }: { confusion: Confusion }) {
  const { classNames, matrix, perClassAccuracy } = confusion;
  return (
    <div className="confusion" data-testid="confusion-matrix" data-classes={classNames.length} data-total={confusion.total}>
      <table aria-label={`Confusion matrix of ${confusion.output}: rows are true classes, columns predicted`}>
        <thead>
          <tr>
            <th className="confusion__corner" scope="col">
              true ↓ predicted →
            </th>
            {matrix && classNames.map((name) => <th key={name} scope="col" title={name}>{name}</th>)}
            <th scope="col">accuracy</th>
          </tr>
        </thead>
        <tbody>
          {classNames.map((name, t) => {
            const row = matrix?.[t];
            const rowTotal = row ? row.reduce((a, b) => a + b, 0) : 0;
            return (
              <tr key={name} data-testid="confusion-row">
                <th scope="row" title={name}>{name}</th>
                {row?.map((count, p) => (
                  <td
                    key={p}
                    data-share={rowTotal ? (count / rowTotal).toFixed(3) : 0}
                    className={t === p ? 'confusion__diagonal' : undefined}
                    style={{ '--share': rowTotal ? count / rowTotal : 0 } as CSSProperties}
                    title={`${count} of ${rowTotal} "${name}" predicted "${classNames[p]}"`}
                  >
                    {count}
                  </td>
                ))}
                <td className="confusion__accuracy" data-testid="class-accuracy">{pct(perClassAccuracy[t])}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
      {confusion.note && <p className="muted">{confusion.note}</p>}
    </div>
  );
}

/** The run's result on its validation set: loss and metrics, the data it trained on, and a classifier's confusion. */
export function ValidationPanel({ detail }: { detail: RunDetail }) {
  const result = detail.final ?? detail.evals.at(-1);
  const confusion = detail.final?.confusion ?? [...detail.evals].reverse().find((e) => e.confusion)?.confusion;
  const dataset = detail.dataset;
  if (!result && !dataset) return null;
  return (
    <section className="validation" data-testid="run-validation" aria-label="Validation">
      <h4 className="validation__title">Validation{detail.final ? '' : ' (latest evaluation)'}</h4>
      <dl className="validation__facts">
        {result && (
          <div>
            <dt>loss</dt>
            <dd data-testid="validation-loss">{formatMetric('loss', result.validationLoss)}</dd>
          </div>
        )}
        {result?.validationAccuracy !== undefined && (
          <div>
            <dt>accuracy</dt>
            <dd data-testid="validation-accuracy">{formatMetric('accuracy', result.validationAccuracy)}</dd>
          </div>
        )}
        {Object.entries(result?.metrics ?? {})
          // The accuracy shown above is not shown twice.
          .filter(([name, value]) => !(name === 'accuracy' && value === result?.validationAccuracy))
          .map(([name, value]) => (
          <div key={name} data-testid="validation-metric">
            <dt>{name}</dt>
            <dd>{formatMetric(name, value)}</dd>
          </div>
        ))}
        {dataset && (
          <div data-testid="run-dataset" title={`sha256 ${dataset.checksum} of ${dataset.checksumOf}`}>
            <dt>data</dt>
            <dd>
              {dataset.name}: {dataset.trainSamples.toLocaleString('en-US')} training / {dataset.validationSamples.toLocaleString('en-US')} validation samples · sha256 {dataset.checksum.slice(0, 12)}…
            </dd>
          </div>
        )}
      </dl>
      {confusion && <ConfusionMatrix confusion={confusion} />}
    </section>
  );
}
