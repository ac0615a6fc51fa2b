import { formatCount } from '../format';
import { formatMetric } from '../metricFormat';
import { useStudio } from '../store/studioStore';

/** The outcome of the finished job: its final validation accuracy, how long it took and how fast it ran. */
export function FinalBanner() {
  const final = useStudio((s) => s.job?.metrics.final);
  if (!final) return null;
  return (
    <section className="final" aria-live="polite" aria-label="Result">
      <div className="final__label">{final.validationAccuracy === undefined ? 'Final validation loss' : 'Final validation accuracy'}</div>
      <div className="final__value" data-testid="final-accuracy">
        {final.validationAccuracy === undefined ? final.validationLoss.toFixed(4) : `${(final.validationAccuracy * 100).toFixed(2)}%`}
      </div>
      <div className="final__facts muted" data-testid="final-validation">
        validation loss {final.validationLoss.toFixed(4)}
        {Object.entries(final.metrics ?? {}).map(([name, value]) => ` · ${name} ${formatMetric(name, value)}`)}
      </div>
      <div className="final__facts muted">
        {final.epochs.toFixed(2)} epochs · {formatCount(final.steps)} steps · {final.seconds.toFixed(1)} s · {formatCount(Math.round(final.samplesPerSec))} samples/s ·{' '}
        {final.backends.join(', ')}
      </div>
    </section>
  );
}
