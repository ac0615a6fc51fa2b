import { useEffect, useRef, useState } from 'react';
import { dismissModelFileMessage, openModelFiles, useModelFiles } from './modelFiles';

/**
 * Opening a Keras / tfjs `model.json` with its `.bin` weights: a button with a file picker (a plain file
 * input taking several files, which works in the browser shell and in Electron's sandboxed renderer
 * alike) and dropping the files anywhere on the window. Problems and the importer's findings show in a
 * banner under the header.
 */
export function OpenModelButton({ disabled }: { disabled?: boolean }) {
  const input = useRef<HTMLInputElement>(null);
  const reading = useModelFiles((s) => s.reading);
  return (
    <>
      <button type="button" className="button button--small" data-testid="open-model-file" disabled={disabled || !!reading} title="Open a Keras or tfjs model.json with its .bin weights files (or drop them on the window)" onClick={() => input.current?.click()}>
        {reading ? 'Opening…' : 'Open model.json…'}
      </button>
      <input
        ref={input}
        type="file"
        accept=".json,.bin,application/json"
        multiple
        hidden
        data-testid="model-file-input"
        onChange={(e) => {
          const files = [...(e.currentTarget.files ?? [])];
          // Reset so that picking the same file again (after fixing it) opens it again.
          e.currentTarget.value = '';
          if (files.length) void openModelFiles(files);
        }}
      />
    </>
  );
}

const carriesFiles = (e: DragEvent) => !!e.dataTransfer && [...e.dataTransfer.types].includes('Files');

/** Drop target for the whole window, and the banner that reports what opening a file found. */
export function ModelFileDrop() {
  const [over, setOver] = useState(false);
  const problem = useModelFiles((s) => s.problem);
  const notes = useModelFiles((s) => s.notes);
  useEffect(() => {
    let depth = 0;
    const onEnter = (e: DragEvent) => {
      if (!carriesFiles(e)) return;
      depth++;
      setOver(true);
    };
    const onOver = (e: DragEvent) => {
      if (!carriesFiles(e)) return;
      // Without this the browser (or Electron) would navigate to the dropped file.
      e.preventDefault();
      e.dataTransfer!.dropEffect = 'copy';
    };
    const onLeave = (e: DragEvent) => {
      if (!carriesFiles(e)) return;
      depth = Math.max(0, depth - 1);
      if (depth === 0) setOver(false);
    };
    const onDrop = (e: DragEvent) => {
      if (!carriesFiles(e)) return;
      // A drop a section took (the Data section's data files) is not a model.
      const taken = e.defaultPrevented;
      e.preventDefault();
      depth = 0;
      setOver(false);
      const files = [...(e.dataTransfer?.files ?? [])];
      if (files.length && !taken) void openModelFiles(files);
    };
    window.addEventListener('dragenter', onEnter);
    window.addEventListener('dragover', onOver);
    window.addEventListener('dragleave', onLeave);
    window.addEventListener('drop', onDrop);
    return () => {
      window.removeEventListener('dragenter', onEnter);
      window.removeEventListener('dragover', onOver);
      window.removeEventListener('dragleave', onLeave);
      window.removeEventListener('drop', onDrop);
    };
  }, []);
  return (
    <>
      {over && (
        <div className="model-drop" data-testid="model-drop-overlay" aria-hidden="true">
          <div className="model-drop__box">Drop a Keras or tfjs model.json (with its .bin files) to open it</div>
        </div>
      )}
      {problem && (
        <div className="model-file-banner model-file-banner--error" role="alert" data-testid="model-file-error">
          <div className="model-file-banner__text">
            <strong>Could not open the model.</strong> {problem.what}
            <div>
              <span className="muted">Where:</span> {problem.where}
            </div>
            <div>
              <span className="muted">What to do:</span> {problem.fix}
            </div>
          </div>
          <button type="button" className="button button--small" aria-label="Dismiss" onClick={dismissModelFileMessage}>
            ×
          </button>
        </div>
      )}
      {!problem && notes && (
        <div className="model-file-banner" role="status" data-testid="model-file-notes">
          <div className="model-file-banner__text">
            <strong>Opened {notes.fileName}</strong> with {notes.lines.length} finding{notes.lines.length > 1 ? 's' : ''}; costs leave those parts out.
            <ul>
              {notes.lines.slice(0, 4).map((line) => (
                <li key={line}>{line}</li>
              ))}
              {notes.lines.length > 4 && <li className="muted">… and {notes.lines.length - 4} more</li>}
            </ul>
          </div>
          <button type="button" className="button button--small" aria-label="Dismiss" onClick={dismissModelFileMessage}>
            ×
          </button>
        </div>
      )}
    </>
  );
}
