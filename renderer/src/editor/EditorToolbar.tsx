import { resetToPreset } from '../store/actions';
import { useStudio } from '../store/studioStore';
import { dismissNotice, redo, undo, useEditor } from './editorStore';
import { SHORTCUT_HELP, useEditorShortcuts } from './useEditorShortcuts';

/**
 * Above the graph: undo, redo and reset, where the plan came from, and the last edit's note — or why
 * an edit was refused — where the user is looking.
 */
export function EditorToolbar() {
  useEditorShortcuts();
  const canUndo = useEditor((s) => s.past.length > 0);
  const canRedo = useEditor((s) => s.future.length > 0);
  const source = useEditor((s) => s.source);
  const edited = useEditor((s) => s.edited);
  const notice = useEditor((s) => s.notice);
  const selection = useEditor((s) => s.selection);
  const preset = useStudio((s) => s.preset);
  return (
    <div className="editor-bar" role="toolbar" aria-label="Stage editor">
      <div className="editor-bar__buttons">
        <button type="button" className="button button--small" data-testid="undo-button" disabled={!canUndo} onClick={undo} title="Undo (Ctrl+Z)">
          ↶ Undo
        </button>
        <button type="button" className="button button--small" data-testid="redo-button" disabled={!canRedo} onClick={redo} title="Redo (Ctrl+Shift+Z)">
          ↷ Redo
        </button>
        <button type="button" className="button button--small" data-testid="reset-plan" onClick={resetToPreset} title={`Load the ${preset} preset's plan again (undoable)`}>
          Reset to preset
        </button>
        <span className="editor-bar__source" data-testid="plan-source">
          {source}
          {edited ? ' · edited' : ''}
        </span>
      </div>
      {notice ? (
        <div className={`editor-bar__notice editor-bar__notice--${notice.tone}`} data-testid="editor-notice" role={notice.tone === 'refused' ? 'alert' : 'status'}>
          <span>{notice.text}</span>
          <button type="button" className="editor-bar__close" aria-label="Dismiss" onClick={dismissNotice}>
            ×
          </button>
        </div>
      ) : (
        <div className="editor-bar__hint" title={SHORTCUT_HELP}>
          {selection.length > 0
            ? `${selection.length} layer${selection.length > 1 ? 's' : ''} selected — drag onto another stage, right-click, or press [ / ] to move · S split · M merge`
            : 'Click a layer (shift-click for a range), then drag it onto another stage or right-click it'}
        </div>
      )}
    </div>
  );
}
