import { ALERT_TITLES } from '../monitor/alerts';
import type { Alert } from '../monitor/alerts';
import { dismissJobAlert } from '../store/actions';

/** The job's open alerts (NaN loss, a lost agent, a stalled collective), each naming its rank, each dismissible. */
export function AlertStrip({ alerts }: { alerts: Alert[] }) {
  const open = alerts.filter((a) => !a.dismissed);
  if (open.length === 0) return null;
  return (
    <ul className="alert-strip" data-testid="alerts" aria-label="Alerts">
      {open.map((a) => (
        <li key={a.id} className={`alert alert--${a.kind}`} role="alert" data-testid="alert" data-kind={a.kind} data-rank={a.rank ?? ''}>
          <strong>
            {ALERT_TITLES[a.kind]}
            {a.rank !== null ? ` · rank ${a.rank}` : ''}
            {a.count > 1 ? ` ×${a.count}` : ''}
          </strong>
          <span className="alert__message">{a.message}</span>
          <button type="button" className="alert__dismiss" aria-label={`Dismiss: ${ALERT_TITLES[a.kind]}`} data-testid="alert-dismiss" onClick={() => dismissJobAlert(a.id)}>
            ×
          </button>
        </li>
      ))}
    </ul>
  );
}
