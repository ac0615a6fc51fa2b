import { useEffect, useState, type FormEvent } from 'react';
import { RUN_META_LIMITS, RunMetaUpdateSchema, type RunSummary } from '../../../engine/protocol/runs';
import { saveRunMeta } from './runsStore';

type Field = 'name' | 'tags' | 'notes';

const tagList = (text: string) =>
  text
    .split(',')
    .map((t) => t.trim())
    .filter(Boolean);

/**
 * A run's name, tags and notes, saved in its folder (run.meta.json). Checked with the same zod schema
 * the studio's Node side applies, so a too-long name or a bad tag is said at its field before saving.
 */
export function RunMetaEditor({ run }: { run: RunSummary }) {
  const [name, setName] = useState(run.name ?? '');
  const [tags, setTags] = useState(run.tags.join(', '));
  const [notes, setNotes] = useState(run.notes ?? '');
  const [errors, setErrors] = useState<Partial<Record<Field | 'form', string>>>({});
  const [saved, setSaved] = useState(false);
  // Another run opened, or this one changed elsewhere: show what is stored.
  useEffect(() => {
    setName(run.name ?? '');
    setTags(run.tags.join(', '));
    setNotes(run.notes ?? '');
    setErrors({});
  }, [run.id, run.name, run.tags, run.notes]);
  const update = { name, tags: tagList(tags), notes };
  const dirty = name !== (run.name ?? '') || tagList(tags).join(',') !== run.tags.join(',') || notes !== (run.notes ?? '');
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const parsed = RunMetaUpdateSchema.safeParse(update);
    if (!parsed.success) {
      const found: Partial<Record<Field, string>> = {};
      for (const issue of parsed.error.issues) found[issue.path[0] as Field] ??= issue.path.length > 1 ? `tag ${Number(issue.path[1]) + 1}: ${issue.message}` : issue.message;
      setErrors(found);
      return;
    }
    const refused = await saveRunMeta(run.id, parsed.data);
    setErrors(refused ? { form: refused } : {});
    setSaved(!refused);
  };
  const error = (field: Field) =>
    errors[field] && (
      <span className="field__error" role="alert" id={`run-${field}-error`} data-testid={`run-${field}-error`}>
        {errors[field]}
      </span>
    );
  return (
    <form className="run-meta" onSubmit={(e) => void submit(e)} noValidate data-testid="run-meta">
      <label className="field">
        <span className="field__label">Name</span>
        <input value={name} placeholder={run.id} onChange={(e) => (setName(e.target.value), setSaved(false))} aria-invalid={!!errors.name} aria-describedby={errors.name ? 'run-name-error' : undefined} data-testid="run-name-input" />
        {error('name')}
      </label>
      <label className="field">
        <span className="field__label">Tags (comma separated, up to {RUN_META_LIMITS.tags})</span>
        <input value={tags} placeholder="baseline, lr-sweep" onChange={(e) => (setTags(e.target.value), setSaved(false))} aria-invalid={!!errors.tags} aria-describedby={errors.tags ? 'run-tags-error' : undefined} data-testid="run-tags-input" />
        {error('tags')}
      </label>
      <label className="field run-meta__notes">
        <span className="field__label">Notes</span>
        <textarea value={notes} rows={2} onChange={(e) => (setNotes(e.target.value), setSaved(false))} aria-invalid={!!errors.notes} aria-describedby={errors.notes ? 'run-notes-error' : undefined} data-testid="run-notes-input" />
        {error('notes')}
      </label>
      <div className="run-meta__actions">
        <button type="submit" className="button" disabled={!dirty} data-testid="run-meta-save">
          Save details
        </button>
        {saved && !dirty && (
          <span className="muted" data-testid="run-meta-saved">
            Saved in the run folder.
          </span>
        )}
        {errors.form && (
          <span className="error-text" role="alert" data-testid="run-meta-error">
            {errors.form}
          </span>
        )}
      </div>
    </form>
  );
}
