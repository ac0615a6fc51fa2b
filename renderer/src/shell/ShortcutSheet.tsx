import { useEffect, useRef } from 'react';
import { EDITOR_SHORTCUTS } from '../editor/useEditorShortcuts';
import { showShortcuts, useShell } from './shellStore';
import { useDismiss } from './useDismiss';

/** The studio's own keys (menu bar, graph search, this sheet); the editor's come from its keyboard hook. */
const STUDIO_SHORTCUTS: ReadonlyArray<{ keys: string; what: string }> = [
  { keys: 'Ctrl+S', what: 'Save the project' },
  { keys: 'Ctrl+O', what: 'Open a project' },
  { keys: 'Ctrl+F', what: 'Search the graph (in the graph)' },
  { keys: 'Escape', what: 'Close a menu, this sheet, or the Runs / Clusters view' },
  { keys: '?', what: 'Show or hide this sheet' },
];

function isTyping(target: EventTarget | null): boolean {
  const el = target as HTMLElement | null;
  return !!el && (el.tagName === 'INPUT' || el.tagName === 'SELECT' || el.tagName === 'TEXTAREA' || el.isContentEditable);
}

function Section({ title, rows }: { title: string; rows: ReadonlyArray<{ keys: string; what: string }> }) {
  return (
    <section>
      <h3 className="shortcuts__title">{title}</h3>
      <dl className="shortcuts__list">
        {rows.map((r) => (
          <div key={r.keys + r.what} className="shortcuts__row">
            <dt>
              <kbd>{r.keys}</kbd>
            </dt>
            <dd>{r.what}</dd>
          </div>
        ))}
      </dl>
    </section>
  );
}

/** "?" anywhere but in a text field opens a sheet of every keyboard shortcut; Escape or a click outside closes it. */
export function ShortcutSheet() {
  const open = useShell((s) => s.shortcuts);
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const onKeyDown = (e: KeyboardEvent) => {
      if (e.key !== '?' || e.ctrlKey || e.metaKey || e.altKey || isTyping(e.target)) return;
      e.preventDefault();
      showShortcuts(!useShell.getState().shortcuts);
    };
    window.addEventListener('keydown', onKeyDown);
    return () => window.removeEventListener('keydown', onKeyDown);
  }, []);
  useEffect(() => {
    if (open) box.current?.focus();
  }, [open]);
  useDismiss(open, () => showShortcuts(false), box);
  if (!open) return null;
  return (
    <div className="shortcuts-backdrop">
      <div ref={box} className="shortcuts" role="dialog" aria-modal="true" aria-label="Keyboard shortcuts" tabIndex={-1} data-testid="shortcut-sheet">
        <div className="shortcuts__head">
          <h2>Keyboard shortcuts</h2>
          <button type="button" className="button button--small" onClick={() => showShortcuts(false)} aria-label="Close the shortcut sheet">
            ✕
          </button>
        </div>
        <div className="shortcuts__body">
          <Section title="Stage editor (graph)" rows={EDITOR_SHORTCUTS} />
          <Section title="Studio" rows={STUDIO_SHORTCUTS} />
        </div>
      </div>
    </div>
  );
}
