import { useState, type FormEvent } from 'react';
import { ClusterSettingsRequestSchema } from '../../../engine/protocol/clusters';
import { DEFAULT_REMOTE_DIR, type ClusterSettings } from '../../../engine/protocol/clusterSettings';
import { setClusterSettings } from './clustersStore';
import { fieldErrors } from './fieldErrors';
import { FieldError, invalidProps } from './FieldError';

/** The settings as typed: a remote directory, setup commands one per line, `NAME=value` lines. */
export interface SettingsText {
  remoteDir: string;
  setup: string;
  env: string;
}

export const settingsText = (s?: ClusterSettings): SettingsText => ({
  remoteDir: s?.remoteDir ?? '',
  setup: (s?.setup ?? []).join('\n'),
  env: Object.entries(s?.env ?? {})
    .map(([k, v]) => `${k}=${v}`)
    .join('\n'),
});

const lines = (text: string) =>
  text
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);

/**
 * The settings part of a request from what was typed (fields left empty are left out), and the env
 * line that is not NAME=value, said as the user wrote it (the schema sees only well-formed lines).
 */
export function settingsOf(text: SettingsText): { settings: ClusterSettings; badEnvLine?: string } {
  const env: Record<string, string> = {};
  let badEnvLine: string | undefined;
  for (const [i, line] of text.env.split('\n').entries()) {
    if (!line.trim()) continue;
    const eq = line.indexOf('=');
    if (eq <= 0) badEnvLine ??= `line ${i + 1}: "${line.trim()}" is not NAME=value (e.g. OMP_NUM_THREADS=4)`;
    else env[line.slice(0, eq).trim()] = line.slice(eq + 1);
  }
  const setup = lines(text.setup);
  return { settings: { ...(text.remoteDir.trim() ? { remoteDir: text.remoteDir.trim() } : {}), ...(setup.length ? { setup } : {}), ...(Object.keys(env).length ? { env } : {}) }, ...(badEnvLine ? { badEnvLine } : {}) };
}

/** The three settings fields, each with its validator message (`shown`) under it. */
export function SettingsFields({ id, text, onChange, shown }: { id: string; text: SettingsText; onChange: (field: keyof SettingsText, value: string) => void; shown: (field: keyof SettingsText) => string | undefined }) {
  return (
    <>
      <label className="field">
        <span className="field__label">Remote directory (where Shoal keeps its files on each host; empty: {DEFAULT_REMOTE_DIR})</span>
        <input value={text.remoteDir} onChange={(e) => onChange('remoteDir', e.target.value)} placeholder={DEFAULT_REMOTE_DIR} {...invalidProps(`${id}-remote-dir-error`, shown('remoteDir'))} data-testid={`${id}-remote-dir`} />
        <FieldError id={`${id}-remote-dir-error`} message={shown('remoteDir')} />
      </label>
      <label className="field">
        <span className="field__label">Setup commands (one per line, run on every host at every deploy)</span>
        <textarea rows={3} value={text.setup} onChange={(e) => onChange('setup', e.target.value)} placeholder="module load cuda/12.2" {...invalidProps(`${id}-setup-error`, shown('setup'))} data-testid={`${id}-setup`} />
        <FieldError id={`${id}-setup-error`} message={shown('setup')} />
      </label>
      <label className="field">
        <span className="field__label">Environment (NAME=value per line; stored in plain text, no secrets)</span>
        <textarea rows={3} value={text.env} onChange={(e) => onChange('env', e.target.value)} placeholder="OMP_NUM_THREADS=4" {...invalidProps(`${id}-env-error`, shown('env'))} data-testid={`${id}-env`} />
        <FieldError id={`${id}-env-error`} message={shown('env')} />
      </label>
    </>
  );
}

/**
 * A cluster's remote directory, setup commands and env (as `shoal cluster add --remote-dir/--setup/--env`),
 * edited as a whole and checked as typed with the same zod schema the studio's Node side parses them with.
 */
export function ClusterSettingsForm({ cluster, settings, disabled }: { cluster: string; settings?: ClusterSettings; disabled: boolean }) {
  const [text, setText] = useState(() => settingsText(settings));
  const [touched, setTouched] = useState<Record<string, boolean>>({});
  const [refusal, setRefusal] = useState<string>();
  const typed = settingsOf(text);
  const request = { cluster, ...typed.settings };
  const { errors } = fieldErrors(ClusterSettingsRequestSchema, request, { setup: 'setup command' });
  if (typed.badEnvLine) errors.env = typed.badEnvLine;
  const shown = (field: string) => (touched[field] ? errors[field] : undefined);
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setTouched({ remoteDir: true, setup: true, env: true });
    const parsed = ClusterSettingsRequestSchema.safeParse(request);
    if (!parsed.success || typed.badEnvLine) return;
    setRefusal(await setClusterSettings(parsed.data));
  };
  return (
    <form className="cluster-form cluster-settings" onSubmit={(e) => void submit(e)} noValidate data-testid="cluster-settings-form">
      <h4 className="panel__title">Settings (used from the next deploy)</h4>
      <SettingsFields
        id="settings"
        text={text}
        shown={shown}
        onChange={(field, value) => {
          setText((t) => ({ ...t, [field]: value }));
          setTouched((t) => ({ ...t, [field]: true }));
          setRefusal(undefined);
        }}
      />
      <FieldError id="settings-form-error" message={refusal} />
      <button type="submit" className="button" disabled={disabled} data-testid="settings-save">
        Save settings
      </button>
    </form>
  );
}
