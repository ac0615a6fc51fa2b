import { useMemo, type ReactNode } from 'react';
import type { RunSummary } from '../../../engine/protocol/runs';
import { formatDuration, formatMetric, formatNumber } from '../format';
import { filterRuns, RUN_COLUMNS, runLabel, sortRuns, type RunColumn } from './runsTableModel';
import { openRun, setCompare, sortBy, toggleCompare, useRuns } from './runsStore';

const STATES = ['finished', 'running', 'failed', 'stopped', 'incomplete'];

function metricText(run: RunSummary): string {
  if (run.validationAccuracy !== undefined) return `acc ${formatMetric('accuracy', run.validationAccuracy)}`;
  if (run.validationLoss !== undefined) return `val loss ${formatNumber(run.validationLoss)}`;
  return '—';
}

/** Every metric of the last evaluation, for the cell's tooltip. */
function metricsTitle(run: RunSummary): string | undefined {
  const parts = Object.entries(run.metrics ?? {}).map(([name, value]) => `${name} ${formatMetric(name, value)}`);
  if (run.validationLoss !== undefined) parts.unshift(`validation loss ${formatNumber(run.validationLoss)}`);
  return parts.length ? parts.join('\n') : undefined;
}

/** When a run started, short in the cell ("1/2/30, 9:05 AM"), in full in its tooltip. */
const startedShort = (iso: string) => new Date(iso).toLocaleString(undefined, { dateStyle: 'short', timeStyle: 'short' });

/**
 * A cell's content and its tooltip: every cell is cut to its column's width with an ellipsis (the
 * table never scrolls sideways), so its full text is always in the tooltip.
 */
function cell(run: RunSummary, column: RunColumn): { content: ReactNode; title?: string; testId?: string; className?: string } {
  switch (column) {
    case 'name':
      return {
        title: run.name ? `${run.name}\n${run.id}` : run.id,
        content: (
          <>
            <div>{runLabel(run)}</div>
            {run.name && <div className="muted runs__id">{run.id}</div>}
          </>
        ),
      };
    case 'model':
      return { content: run.model, title: run.model };
    case 'dataset':
      return { content: run.dataset ?? <span className="muted">mnist</span>, title: run.dataset ?? 'mnist' };
    case 'plan':
      return { content: run.planLabel, title: run.planLabel };
    case 'agents':
      return { content: run.agents, title: `${run.agents} agents` };
    case 'hosts':
      return { content: run.hosts.length > 2 ? `${run.hosts[0]} +${run.hosts.length - 1}` : run.hosts.join(', '), title: run.hosts.join(', ') };
    case 'started':
      return { content: startedShort(run.createdAt), title: new Date(run.createdAt).toLocaleString() };
    case 'duration':
      return { content: run.durationMs === undefined ? '—' : formatDuration(run.durationMs) };
    case 'status':
      return {
        className: `run-state run-state--${run.state}`,
        testId: 'run-status',
        title: `${run.state}, ${run.stepsDone}/${run.steps} steps`,
        content: (
          <>
            {run.state}
            <div className="muted">
              {run.stepsDone}/{run.steps} steps
            </div>
          </>
        ),
      };
    case 'loss':
      return { testId: 'run-final-loss', content: run.finalLoss === undefined ? '—' : formatNumber(run.finalLoss) };
    case 'metric':
      return { testId: 'run-metric', title: metricsTitle(run), content: metricText(run) };
    case 'tags':
      return {
        testId: 'run-tags',
        title: run.tags.join(', ') || undefined,
        content: run.tags.map((t) => (
          <span key={t} className="run-tag">
            {t}
          </span>
        )),
      };
    case 'notes':
      return { content: run.notes, title: run.notes };
  }
}

function Cell({ run, column, numeric, priority }: { run: RunSummary; column: RunColumn; numeric?: boolean; priority: number }) {
  const { content, title, testId, className } = cell(run, column);
  return (
    <td className={[className, numeric ? 'num' : undefined].filter(Boolean).join(' ') || undefined} title={title} data-testid={testId} data-col={column} data-priority={priority}>
      {content}
    </td>
  );
}

/** The runs on disk as a table: click a header to sort, type to filter, tick runs to compare any number of them. */
export function RunsTable() {
  const runs = useRuns((s) => s.runs);
  const sort = useRuns((s) => s.sort);
  const query = useRuns((s) => s.query);
  const states = useRuns((s) => s.states);
  const opened = useRuns((s) => s.opened);
  const compare = useRuns((s) => s.compare);
  const shown = useMemo(() => sortRuns(filterRuns(runs, query, new Set(states)), sort), [runs, query, states, sort]);
  const allTicked = shown.length > 0 && shown.every((r) => compare.includes(r.id));
  return (
    <div className="runs-grid">
      <div className="runs-grid__filters" role="search">
        <input
          type="search"
          className="runs-grid__query"
          placeholder="Filter: name, model, dataset, plan, tag:x, notes…"
          aria-label="Filter runs"
          value={query}
          onChange={(e) => useRuns.setState({ query: e.target.value })}
          data-testid="runs-filter"
        />
        {STATES.map((state) => (
          <label key={state} className="runs-grid__state">
            <input
              type="checkbox"
              checked={states.includes(state)}
              onChange={() => useRuns.setState({ states: states.includes(state) ? states.filter((s) => s !== state) : [...states, state] })}
              data-testid={`runs-state-${state}`}
            />{' '}
            {state}
          </label>
        ))}
        <span className="muted" data-testid="runs-count">
          {shown.length === runs.length ? `${runs.length} run${runs.length === 1 ? '' : 's'}` : `${shown.length} of ${runs.length} runs`}
          {compare.length > 0 && ` · ${compare.length} ticked`}
        </span>
        {compare.length > 0 && (
          <button type="button" className="button button--quiet" onClick={() => setCompare([])} data-testid="compare-clear">
            Clear ticks
          </button>
        )}
      </div>
      <div className="runs-grid__scroll">
        <table className="runs-table runs-table--list" data-testid="runs-list">
          <thead>
            <tr>
              <th data-col="tick">
                <input
                  type="checkbox"
                  aria-label="Compare every run shown"
                  checked={allTicked}
                  onChange={() => setCompare(allTicked ? compare.filter((id) => !shown.some((r) => r.id === id)) : [...new Set([...compare, ...shown.map((r) => r.id)])])}
                  data-testid="compare-all"
                />
              </th>
              {RUN_COLUMNS.map((c) => (
                <th key={c.key} aria-sort={sort.key === c.key ? (sort.descending ? 'descending' : 'ascending') : 'none'} className={c.numeric ? 'num' : undefined} data-col={c.key} data-priority={c.priority}>
                  <button type="button" className="runs-grid__sort" onClick={() => sortBy(c.key)} title={`Sort by ${c.label.toLowerCase()}`} data-testid={`sort-${c.key}`}>
                    {c.label}
                    <span aria-hidden="true">{sort.key === c.key ? (sort.descending ? ' ▼' : ' ▲') : ''}</span>
                  </button>
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {shown.map((run) => (
              <tr key={run.id} className={run.id === opened ? 'is-selected' : undefined} data-testid="run-row" data-run={run.id} onClick={() => openRun(run.id)}>
                <td data-col="tick" onClick={(e) => e.stopPropagation()}>
                  <input type="checkbox" aria-label={`Compare ${runLabel(run)}`} checked={compare.includes(run.id)} onChange={() => toggleCompare(run.id)} />
                </td>
                {RUN_COLUMNS.map((c) => (
                  <Cell key={c.key} run={run} column={c.key} numeric={c.numeric} priority={c.priority} />
                ))}
              </tr>
            ))}
          </tbody>
        </table>
        {shown.length === 0 && runs.length > 0 && (
          <p className="muted runs-grid__none" data-testid="runs-none">
            No run matches the filter.
          </p>
        )}
      </div>
    </div>
  );
}
