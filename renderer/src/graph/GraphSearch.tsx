import { useEffect, useRef } from 'react';
import type { SearchHit } from './search';

interface Props {
  open: boolean;
  query: string;
  hits: SearchHit[];
  /** Index of the focused match in `hits`, -1 when none. */
  index: number;
  onOpen(open: boolean): void;
  onQuery(query: string): void;
  /** Focus the next (1) or previous (-1) match. */
  onStep(step: 1 | -1): void;
}

/**
 * Find layers on the graph by id or kind. Ctrl+F (⌘F) opens it from anywhere in the window, Enter
 * focuses the next match and Shift+Enter the previous one, Escape closes it.
 */
export function GraphSearch({ open, query, hits, index, onOpen, onQuery, onStep }: Props) {
  const input = useRef<HTMLInputElement>(null);
  useEffect(() => {
    const onKeyDown = (e: KeyboardEvent) => {
      if ((e.ctrlKey || e.metaKey) && !e.altKey && !e.shiftKey && e.key.toLowerCase() === 'f') {
        e.preventDefault();
        onOpen(true);
        // Focus after the box renders (it may have been closed).
        requestAnimationFrame(() => {
          input.current?.focus();
          input.current?.select();
        });
      }
    };
    window.addEventListener('keydown', onKeyDown);
    return () => window.removeEventListener('keydown', onKeyDown);
  }, [onOpen]);

  if (!open) {
    return (
      <button type="button" className="button button--small graph__search-open" data-testid="graph-search-open" title="Find a layer (Ctrl+F)" onClick={() => onOpen(true)}>
        Find layer
      </button>
    );
  }
  const count = query.trim() ? (hits.length ? `${index + 1} / ${hits.length}` : 'no match') : '';
  return (
    <div className="graph__search" role="search" data-testid="graph-search">
      <input
        ref={input}
        autoFocus
        type="search"
        data-testid="graph-search-input"
        aria-label="Find a layer by name or kind"
        placeholder="Find layer (name or kind)"
        value={query}
        onChange={(e) => onQuery(e.target.value)}
        onKeyDown={(e) => {
          if (e.key === 'Enter') {
            e.preventDefault();
            onStep(e.shiftKey ? -1 : 1);
          } else if (e.key === 'Escape') {
            e.preventDefault();
            onOpen(false);
          }
        }}
      />
      <span className="graph__search-count muted" data-testid="graph-search-count" aria-live="polite">
        {count}
      </span>
      <button type="button" className="button button--small" aria-label="Previous match" disabled={!hits.length} onClick={() => onStep(-1)}>
        ↑
      </button>
      <button type="button" className="button button--small" aria-label="Next match" disabled={!hits.length} onClick={() => onStep(1)}>
        ↓
      </button>
      <button type="button" className="button button--small" aria-label="Close search" onClick={() => onOpen(false)}>
        ×
      </button>
    </div>
  );
}
