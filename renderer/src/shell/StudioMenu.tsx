import { useCallback, useEffect, useRef, useState } from 'react';
import { ClustersView } from '../clusters/ClustersView';
import { openProjectFile, openRecent, saveProject, useProject } from '../project/projectActions';
import { RunsView } from '../runs/RunsView';
import { applyTheme, openOverlay, showShortcuts, toggleTheme, useShell } from './shellStore';
import { useDismiss } from './useDismiss';
import './shell.css';

/**
 * The studio's menu bar: project (save, open, recent), the Runs and Clusters views, the theme, and
 * their shortcuts — Ctrl/Cmd+S saves, Ctrl/Cmd+O opens, Escape closes a view.
 */
export const MENU_SHORTCUTS = 'Ctrl+S save project · Ctrl+O open project · Escape close';

function useMenuShortcuts(): void {
  useEffect(() => {
    const onKeyDown = (e: KeyboardEvent) => {
      const mod = e.ctrlKey || e.metaKey;
      const key = e.key.toLowerCase();
      if (mod && !e.shiftKey && !e.altKey && key === 's') {
        e.preventDefault();
        saveProject();
      } else if (mod && !e.shiftKey && !e.altKey && key === 'o') {
        e.preventDefault();
        void openProjectFile();
      } else if (e.key === 'Escape' && useShell.getState().overlay && !document.querySelector('[data-testid="trust-dialog"]')) {
        // A host-key question is answered, not dismissed: Escape leaves it open.
        openOverlay(undefined);
      }
    };
    window.addEventListener('keydown', onKeyDown);
    return () => window.removeEventListener('keydown', onKeyDown);
  }, []);
}

function RecentMenu() {
  const recent = useProject((s) => s.recent);
  const [open, setOpen] = useState(false);
  const root = useRef<HTMLDivElement>(null);
  const close = useCallback(() => setOpen(false), []);
  // Escape and a press outside close it, as any desktop menu; the button itself toggles it.
  useDismiss(open, close, root);
  return (
    <div className="menu-bar__recent" ref={root}>
      <button type="button" className="button button--quiet" aria-haspopup="menu" aria-expanded={open} onClick={() => setOpen(!open)} data-testid="recent-projects">
        Recent ▾
      </button>
      {open && (
        <ul className="menu-bar__dropdown" role="menu" data-testid="recent-menu">
          {recent.length === 0 && <li className="muted">No recent projects: save one with Ctrl+S.</li>}
          {recent.map((r) => (
            <li key={r.name} role="none">
              <button
                type="button"
                role="menuitem"
                onClick={() => {
                  setOpen(false);
                  void openRecent(r.name);
                }}
              >
                <span>{r.name}</span>
                <span className="muted">
                  {r.model} · {new Date(r.savedAt).toLocaleString()}
                </span>
              </button>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

export function StudioMenu() {
  const theme = useShell((s) => s.theme);
  const overlay = useShell((s) => s.overlay);
  const notice = useShell((s) => s.notice);
  const name = useProject((s) => s.name);
  useMenuShortcuts();
  useEffect(() => applyTheme(theme), [theme]);
  return (
    <>
      <nav className="menu-bar" aria-label="Studio menu" data-testid="menu-bar">
        <span className="menu-bar__project muted" data-testid="project-name">
          {name ? `Project: ${name}` : 'Unsaved project'}
        </span>
        <button type="button" className="button button--quiet" onClick={saveProject} title="Save project (Ctrl+S)" data-testid="save-project">
          Save
        </button>
        <button type="button" className="button button--quiet" onClick={() => void openProjectFile()} title="Open project (Ctrl+O)" data-testid="open-project">
          Open…
        </button>
        <RecentMenu />
        <span className="menu-bar__sep" />
        <button type="button" className={`button button--quiet${overlay === 'runs' ? ' is-active' : ''}`} onClick={() => openOverlay(overlay === 'runs' ? undefined : 'runs')} data-testid="open-runs">
          Runs
        </button>
        <button type="button" className={`button button--quiet${overlay === 'clusters' ? ' is-active' : ''}`} onClick={() => openOverlay(overlay === 'clusters' ? undefined : 'clusters')} data-testid="open-clusters">
          Clusters
        </button>
        {notice && (
          <span className={`menu-bar__notice menu-bar__notice--${notice.tone}`} role={notice.tone === 'error' ? 'alert' : 'status'} data-testid="menu-notice">
            {notice.text}
            <button type="button" aria-label="Dismiss" onClick={() => useShell.setState({ notice: undefined })}>
              ✕
            </button>
          </span>
        )}
        <span className="menu-bar__right muted" title={MENU_SHORTCUTS}>
          <button type="button" className="button button--quiet" onClick={() => showShortcuts(true)} title="Keyboard shortcuts (?)" data-testid="show-shortcuts">
            ?
          </button>
          <button type="button" className="button button--quiet" onClick={toggleTheme} aria-label={`Switch to the ${theme === 'dark' ? 'light' : 'dark'} theme`} data-testid="theme-toggle">
            {theme === 'dark' ? '☀ Light' : '☾ Dark'}
          </button>
        </span>
      </nav>
      {overlay === 'runs' && <RunsView />}
      {overlay === 'clusters' && <ClustersView />}
    </>
  );
}
