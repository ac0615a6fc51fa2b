import { formatCount, formatDuration, formatMetric, formatPercent, formatRate } from '../format';
import { useStudio } from '../store/studioStore';

/** The outcome of the finished job: its final validation accuracy, how long it took and how fast it ran. */
export function FinalBanner() {
  const final = useStudio((s) => s.job?.metrics.final);
  if (!final) return null;
  return (
    <section className="final" aria-live="polite" aria-label="Result">
      <div className="final__label">{final.validationAccuracy === undefined ? 'Final validation loss' : 'Final validation accuracy'}</div>
      <div className="final__value" data-testid="final-accuracy">
        {final.validationAccuracy === undefined ? formatMetric('loss', final.validationLoss) : formatPercent(final.validationAccuracy, 2)}
      </div>
      <div className="final__facts muted" data-testid="final-validation">
        validation loss {formatMetric('loss', final.validationLoss)}
        {Object.entries(final.metrics ?? {}).map(([name, value]) => ` · ${name} ${formatMetric(name, value)}`)}
      </div>
      <div className="final__facts muted">
        {final.epochs.toFixed(2)} epochs · {formatCount(final.steps)} steps · {formatDuration(final.seconds * 1000)} · {formatRate(final.samplesPerSec)} ·{' '}
        {final.backends.join(', ')}
      </div>
    </section>
  );
}
