import { useEffect, useRef } from 'react';
import type { KeyboardEvent } from 'react';
import { useStudio } from '../store/studioStore';
import { isActive } from '../store/metrics';
import { Monitor } from '../views/Monitor';
import { PredictedTimeline } from '../views/PredictedTimeline';
import { showLowerTab, useShell } from './shellStore';
import type { LowerTab } from './shellStore';

const TABS: Array<{ id: LowerTab; label: string }> = [
  { id: 'timeline', label: 'Predicted timeline' },
  { id: 'monitor', label: 'Monitor' },
];

/**
 * The pane under the graph: the plan's predicted timeline, or the Monitor of the job on show, one at a
 * time in tabs (WAI-ARIA tabs: arrow keys move between them). A job that starts or is opened brings
 * the Monitor forward once; the user may go back to the timeline while it runs.
 */
export function LowerPane() {
  const tab = useShell((s) => s.lowerTab);
  const job = useStudio((s) => s.job);
  const live = !!job && isActive(job.metrics.state);
  // A different job on show (started, deployed, re-attached): bring the Monitor forward.
  const shown = job ? `${job.model}|${job.planLabel}|${job.startedAt ?? ''}` : undefined;
  const last = useRef(shown);
  useEffect(() => {
    if (shown && shown !== last.current) showLowerTab('monitor');
    last.current = shown;
  }, [shown]);
  const onKeyDown = (e: KeyboardEvent) => {
    if (e.key !== 'ArrowLeft' && e.key !== 'ArrowRight') return;
    const next = TABS[(TABS.findIndex((t) => t.id === tab) + 1) % TABS.length].id;
    showLowerTab(next);
    document.getElementById(`lower-tab-${next}`)?.focus();
    e.preventDefault();
  };
  return (
    <div className="lower-pane">
      <div className="lower-pane__tabs" role="tablist" aria-label="Timeline and Monitor" onKeyDown={onKeyDown}>
        {TABS.map((t) => (
          <button
            key={t.id}
            id={`lower-tab-${t.id}`}
            type="button"
            role="tab"
            className="lower-pane__tab"
            aria-selected={tab === t.id}
            aria-controls={`lower-panel-${t.id}`}
            tabIndex={tab === t.id ? 0 : -1}
            data-testid={`tab-${t.id}`}
            onClick={() => showLowerTab(t.id)}
          >
            {t.label}
            {t.id === 'monitor' && live && <span className="lower-pane__live" aria-label="(a job is running)" />}
          </button>
        ))}
      </div>
      <div className="lower-pane__body" role="tabpanel" id={`lower-panel-${tab}`} aria-labelledby={`lower-tab-${tab}`}>
        {tab === 'timeline' ? <PredictedTimeline /> : <Monitor />}
      </div>
    </div>
  );
}
