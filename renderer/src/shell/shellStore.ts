import { create } from 'zustand';

/**
 * The studio's chrome: which overlay is open (Runs, Clusters) and the colour theme. The theme is kept
 * in localStorage and applied as `data-theme` on the document, where the stylesheet picks it up.
 */
export type Overlay = 'runs' | 'clusters';
export type Theme = 'dark' | 'light';
/** The tab of the pane under the graph. */
export type LowerTab = 'timeline' | 'monitor';

const THEME_KEY = 'shoal.theme';

function storedTheme(): Theme {
  try {
    const value = localStorage.getItem(THEME_KEY);
    if (value === 'light' || value === 'dark') return value;
  } catch {
    // Storage unavailable (private mode): the default theme.
  }
  return typeof matchMedia === 'function' && matchMedia('(prefers-color-scheme: light)').matches ? 'light' : 'dark';
}

interface ShellState {
  overlay?: Overlay;
  theme: Theme;
  /** A short message about the last project action (saved, opened, refused). */
  notice?: { tone: 'ok' | 'error'; text: string };
  lowerTab: LowerTab;
  /** The keyboard-shortcut sheet ("?") is open. */
  shortcuts: boolean;
}

export const useShell = create<ShellState>()(() => ({ theme: storedTheme(), lowerTab: 'timeline', shortcuts: false }));

export function showLowerTab(lowerTab: LowerTab): void {
  useShell.setState({ lowerTab });
}

export function showShortcuts(shortcuts: boolean): void {
  useShell.setState({ shortcuts });
}

export function applyTheme(theme: Theme): void {
  document.documentElement.dataset.theme = theme;
}

export function toggleTheme(): void {
  const theme: Theme = useShell.getState().theme === 'dark' ? 'light' : 'dark';
  useShell.setState({ theme });
  applyTheme(theme);
  try {
    localStorage.setItem(THEME_KEY, theme);
  } catch {
    // Not persisted; the toggle still applies to this window.
  }
}

export function openOverlay(overlay: Overlay | undefined): void {
  useShell.setState({ overlay });
}

export function notify(tone: 'ok' | 'error', text: string): void {
  useShell.setState({ notice: { tone, text } });
}
