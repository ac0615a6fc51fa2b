import { useState, type FocusEvent, type FormEvent } from 'react';
import { AddHostsRequestSchema, ImportHostsRequestSchema } from '../../../engine/protocol/clusters';
import { SettingsFields, settingsOf, settingsText } from './ClusterSettingsForm';
import { addHosts, importHosts } from './clustersStore';
import { fieldErrors } from './fieldErrors';
import { FieldError, invalidProps } from './FieldError';

export const hostList = (text: string) =>
  text
    .split(/[\s,]+/)
    .map((s) => s.trim())
    .filter(Boolean);

/** Which field a refusal of the studio's Node side is about (a key file that is not there, a public key). */
export function refusalField(message: string): 'identityFile' | 'jump' | 'hosts' | 'form' {
  if (/^Identity file|is a public key/.test(message)) return 'identityFile';
  if (/jump/i.test(message)) return 'jump';
  if (/is not a host|port .* is not between/.test(message)) return 'hosts';
  return 'form';
}

/**
 * Add hosts by address (as `shoal cluster add`): user@address[:port], an identity file path, a jump host.
 * Checked with the request's zod schema as the user types (after the first submit or leaving a field),
 * each message at its field; what only the studio can check (the key file exists) comes back to its field too.
 */
export function AddHostsForm({ defaultCluster }: { defaultCluster?: string }) {
  const [cluster, setCluster] = useState(defaultCluster ?? 'lab');
  const [hosts, setHosts] = useState('');
  const [identity, setIdentity] = useState('');
  const [jump, setJump] = useState('');
  const [settings, setSettings] = useState(settingsText);
  const [moreOpen, setMoreOpen] = useState(false);
  const [touched, setTouched] = useState<Record<string, boolean>>({});
  const [refusal, setRefusal] = useState<{ field: string; message: string }>();
  const typed = settingsOf(settings);
  const request = { cluster: cluster.trim(), hosts: hostList(hosts), identityFile: identity.trim() || undefined, jump: jump.trim() || undefined, ...typed.settings };
  const { errors } = fieldErrors(AddHostsRequestSchema, request, { hosts: 'host', setup: 'setup command' });
  if (typed.badEnvLine) errors.env = typed.badEnvLine;
  const shown = (field: string) => (touched[field] ? errors[field] : undefined) ?? (refusal?.field === field ? refusal.message : undefined);
  const showSettings = moreOpen || !!(shown('remoteDir') ?? shown('setup') ?? shown('env'));
  // Leaving a field for the Add button shows nothing yet: a message appearing then would move the
  // button from under the pointer and swallow the click; the submit shows every message anyway.
  const touch = (field: string) => (e: FocusEvent<HTMLInputElement>) => {
    if ((e.relatedTarget as HTMLElement | null)?.getAttribute('type') !== 'submit') setTouched((t) => ({ ...t, [field]: true }));
  };
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setTouched({ cluster: true, hosts: true, identityFile: true, jump: true, remoteDir: true, setup: true, env: true });
    setRefusal(undefined);
    const parsed = AddHostsRequestSchema.safeParse(request);
    if (!parsed.success || typed.badEnvLine) return;
    const refused = await addHosts(parsed.data);
    if (refused) {
      setRefusal({ field: refusalField(refused), message: refused });
      return;
    }
    setHosts('');
    setSettings(settingsText());
    setTouched({});
  };
  return (
    <form className="cluster-form" onSubmit={(e) => void submit(e)} noValidate data-testid="add-hosts-form">
      <h4 className="panel__title">Add hosts</h4>
      <label className="field">
        <span className="field__label">Cluster</span>
        <input value={cluster} onChange={(e) => setCluster(e.target.value)} onBlur={touch('cluster')} {...invalidProps('add-cluster-error', shown('cluster'))} data-testid="add-cluster-name" />
        <FieldError id="add-cluster-error" message={shown('cluster')} />
      </label>
      <label className="field">
        <span className="field__label">Hosts (user@address[:port], comma or space separated)</span>
        <input value={hosts} onChange={(e) => (setHosts(e.target.value), setRefusal(undefined))} onBlur={touch('hosts')} placeholder="alice@10.0.0.5, alice@10.0.0.6:2222" {...invalidProps('add-hosts-error', shown('hosts'))} data-testid="add-hosts" />
        <FieldError id="add-hosts-error" message={shown('hosts')} />
      </label>
      <label className="field">
        <span className="field__label">Identity file (path; optional, ssh-agent is tried first)</span>
        <input value={identity} onChange={(e) => (setIdentity(e.target.value), setRefusal(undefined))} onBlur={touch('identityFile')} placeholder="~/.ssh/id_ed25519" {...invalidProps('add-identity-error', shown('identityFile'))} data-testid="add-identity" />
        <FieldError id="add-identity-error" message={shown('identityFile')} />
      </label>
      <label className="field">
        <span className="field__label">Jump host (optional)</span>
        <input value={jump} onChange={(e) => (setJump(e.target.value), setRefusal(undefined))} onBlur={touch('jump')} placeholder="bob@bastion" {...invalidProps('add-jump-error', shown('jump'))} data-testid="add-jump" />
        <FieldError id="add-jump-error" message={shown('jump')} />
      </label>
      {/* Shown while the user keeps it open, and whenever a setting has a message to show. */}
      <button type="button" className="button button--quiet cluster-form__more" aria-expanded={showSettings} onClick={() => setMoreOpen(!showSettings)} data-testid="add-settings-toggle">
        {showSettings ? '▾' : '▸'} Cluster settings (optional: remote directory, setup, env)
      </button>
      {showSettings && (
        <SettingsFields
          id="add"
          text={settings}
          shown={shown}
          onChange={(field, value) => {
            setSettings((t) => ({ ...t, [field]: value }));
            setTouched((t) => ({ ...t, [field]: true }));
          }}
        />
      )}
      <FieldError id="add-form-error" message={refusal?.field === 'form' ? refusal.message : undefined} />
      <button type="submit" className="button" data-testid="add-hosts-submit">
        Add
      </button>
    </form>
  );
}

/** Import hosts from an OpenSSH config (as `shoal cluster import`). */
export function ImportHostsForm({ defaultCluster }: { defaultCluster?: string }) {
  const [cluster, setCluster] = useState(defaultCluster ?? 'lab');
  const [config, setConfig] = useState('');
  const [names, setNames] = useState('');
  const [touched, setTouched] = useState(false);
  const request = { cluster: cluster.trim(), sshConfig: config.trim() || undefined, hosts: hostList(names).length ? hostList(names) : undefined };
  const { errors } = fieldErrors(ImportHostsRequestSchema, request, { hosts: 'host' });
  const shown = (field: string) => (touched ? errors[field] : undefined);
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setTouched(true);
    const parsed = ImportHostsRequestSchema.safeParse(request);
    if (parsed.success) await importHosts(parsed.data);
  };
  return (
    <form className="cluster-form" onSubmit={(e) => void submit(e)} noValidate data-testid="import-hosts-form">
      <h4 className="panel__title">Import from ssh config</h4>
      <label className="field">
        <span className="field__label">Cluster</span>
        <input value={cluster} onChange={(e) => setCluster(e.target.value)} onBlur={(e) => (e.relatedTarget as HTMLElement | null)?.getAttribute('type') !== 'submit' && setTouched(true)} {...invalidProps('import-cluster-error', shown('cluster'))} data-testid="import-cluster-name" />
        <FieldError id="import-cluster-error" message={shown('cluster')} />
      </label>
      <label className="field">
        <span className="field__label">Config file (default ~/.ssh/config)</span>
        <input value={config} onChange={(e) => setConfig(e.target.value)} placeholder="~/.ssh/config" {...invalidProps('import-config-error', shown('sshConfig'))} data-testid="import-config" />
        <FieldError id="import-config-error" message={shown('sshConfig')} />
      </label>
      <label className="field">
        <span className="field__label">Hosts (default: every Host entry)</span>
        <input value={names} onChange={(e) => setNames(e.target.value)} placeholder="gpu1, gpu2" {...invalidProps('import-hosts-error', shown('hosts'))} data-testid="import-hosts" />
        <FieldError id="import-hosts-error" message={shown('hosts')} />
      </label>
      <button type="submit" className="button" data-testid="import-hosts-submit">
        Import
      </button>
    </form>
  );
}
