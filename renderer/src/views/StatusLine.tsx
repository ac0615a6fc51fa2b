import { formatDuration, formatNumber, formatPercent } from '../format';
import { useStudio } from '../store/studioStore';
import type { StudioState } from '../store/studioStore';

function describe(s: StudioState): { text: string; tone: 'ok' | 'busy' | 'error' } {
  if (s.connection.state === 'connecting') return { text: 'Connecting to the studio…', tone: 'busy' };
  if (s.connection.state === 'failed') return { text: s.connection.message, tone: 'error' };
  if (s.actionError) return { text: s.actionError.split('\n')[0], tone: 'error' };
  if (s.modelError) return { text: `Could not open the model: ${s.modelError}`, tone: 'error' };
  const job = s.job;
  if (!job) return { text: s.model ? `Ready · ${s.model.name} open · pick a plan and press Train` : 'Ready', tone: 'ok' };
  const m = job.metrics;
  const where = `${job.model} · ${job.planLabel} · ${m.membership?.agents.length ?? job.agents} agents`;
  const last = m.loss.length > 0 ? `epoch ${m.epoch.toFixed(2)} · step ${m.steps[m.steps.length - 1]} · loss ${formatNumber(m.loss[m.loss.length - 1])} · ${formatDuration(m.elapsedMs)}` : '';
  switch (m.state) {
    case 'starting':
      return { text: `Starting ${where}${m.statusMessage ? ` — ${m.statusMessage}` : '…'}`, tone: 'busy' };
    case 'running':
      return { text: `Training ${where}${last ? ` — ${last}` : ''}`, tone: 'busy' };
    case 'finished':
      return { text: `Finished ${where}${m.final?.validationAccuracy !== undefined ? ` — validation accuracy ${formatPercent(m.final.validationAccuracy, 2)}` : ''}`, tone: 'ok' };
    case 'stopped':
      return { text: `Stopped ${where}${last ? ` at ${last}` : ''}`, tone: 'ok' };
    case 'failed':
      // One line: a long failure (a deploy's per-host errors) is shown in full where it belongs.
      return { text: `Failed ${where}: ${m.statusMessage?.split('\n')[0].replace(/:\s*$/, '') ?? 'see the log'}`, tone: 'error' };
  }
}

/** One line at the bottom of the window: connection, current job, or the last error. */
export function StatusLine() {
  const status = describe(useStudio());
  return (
    <footer className={`status status--${status.tone}`} data-testid="status" role="status" aria-live="polite">
      <span className="status__dot" aria-hidden="true" />
      {status.text}
    </footer>
  );
}
