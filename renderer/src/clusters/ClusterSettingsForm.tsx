import { useState, type FormEvent } from 'react';
import { ClusterSettingsRequestSchema } from '../../../engine/protocol/clusters';
import { DEFAULT_REMOTE_DIR, type ClusterSettings } from '../../../engine/protocol/clusterSettings';
import { setClusterSettings } from './clustersStore';
import { fieldErrors } from './fieldErrors';
import { FieldError, invalidProps } from './FieldError';

const lines = (text: string) =>
  text
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);

/** `NAME=value` lines as a record; the lines that are not NAME=value, said as the user wrote them. */
export function parseEnvLines(text: string): { env: Record<string, string>; bad?: string } {
  const env: Record<string, string> = {};
  for (const [i, line] of text.split('\n').entries()) {
    if (!line.trim()) continue;
    const eq = line.indexOf('=');
    if (eq <= 0) return { env, bad: `line ${i + 1}: "${line.trim()}" is not NAME=value (e.g. OMP_NUM_THREADS=4)` };
    env[line.slice(0, eq).trim()] = line.slice(eq + 1);
  }
  return { env };
}

/**
 * A cluster's remote directory, setup commands and env (as `shoal cluster add --remote-dir/--setup/--env`),
 * edited as a whole and checked as typed with the same zod schema the studio's Node side parses them with.
 */
export function ClusterSettingsForm({ cluster, settings, disabled }: { cluster: string; settings?: ClusterSettings; disabled: boolean }) {
  const [remoteDir, setRemoteDir] = useState(settings?.remoteDir ?? '');
  const [setup, setSetup] = useState((settings?.setup ?? []).join('\n'));
  const [envText, setEnvText] = useState(Object.entries(settings?.env ?? {}).map(([k, v]) => `${k}=${v}`).join('\n'));
  const [touched, setTouched] = useState<Record<string, boolean>>({});
  const [refusal, setRefusal] = useState<string>();
  const parsedEnv = parseEnvLines(envText);
  const request = { cluster, remoteDir: remoteDir.trim() || undefined, setup: lines(setup).length ? lines(setup) : undefined, env: Object.keys(parsedEnv.env).length ? parsedEnv.env : undefined };
  const { errors } = fieldErrors(ClusterSettingsRequestSchema, request, { setup: 'setup command' });
  if (parsedEnv.bad) errors.env = parsedEnv.bad;
  const shown = (field: string) => (touched[field] ? errors[field] : undefined);
  const edit = (field: string, set: (v: string) => void) => (value: string) => {
    set(value);
    setTouched((t) => ({ ...t, [field]: true }));
    setRefusal(undefined);
  };
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setTouched({ remoteDir: true, setup: true, env: true });
    const parsed = ClusterSettingsRequestSchema.safeParse(request);
    if (!parsed.success || parsedEnv.bad) return;
    setRefusal(await setClusterSettings(parsed.data));
  };
  return (
    <form className="cluster-form cluster-settings" onSubmit={(e) => void submit(e)} noValidate data-testid="cluster-settings-form">
      <h4 className="panel__title">Settings (used from the next deploy)</h4>
      <label className="field">
        <span className="field__label">Remote directory (where Shoal keeps its files on each host; empty: {DEFAULT_REMOTE_DIR})</span>
        <input value={remoteDir} onChange={(e) => edit('remoteDir', setRemoteDir)(e.target.value)} placeholder={DEFAULT_REMOTE_DIR} {...invalidProps('settings-remote-dir-error', shown('remoteDir'))} data-testid="settings-remote-dir" />
        <FieldError id="settings-remote-dir-error" message={shown('remoteDir')} />
      </label>
      <label className="field">
        <span className="field__label">Setup commands (one per line, run on every host at every deploy)</span>
        <textarea rows={3} value={setup} onChange={(e) => edit('setup', setSetup)(e.target.value)} placeholder="module load cuda/12.2" {...invalidProps('settings-setup-error', shown('setup'))} data-testid="settings-setup" />
        <FieldError id="settings-setup-error" message={shown('setup')} />
      </label>
      <label className="field">
        <span className="field__label">Environment (NAME=value per line; stored in plain text, no secrets)</span>
        <textarea rows={3} value={envText} onChange={(e) => edit('env', setEnvText)(e.target.value)} placeholder="OMP_NUM_THREADS=4" {...invalidProps('settings-env-error', shown('env'))} data-testid="settings-env" />
        <FieldError id="settings-env-error" message={shown('env')} />
      </label>
      <FieldError id="settings-form-error" message={refusal} />
      <button type="submit" className="button" disabled={disabled} data-testid="settings-save">
        Save settings
      </button>
    </form>
  );
}
