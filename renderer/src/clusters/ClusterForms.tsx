import { useState, type FormEvent } from 'react';
import { addHosts, importHosts } from './clustersStore';

const list = (text: string) =>
  text
    .split(/[\s,]+/)
    .map((s) => s.trim())
    .filter(Boolean);

/** Add hosts by address (as `shoal cluster add`): user@address[:port], an identity file path, a jump host. */
export function AddHostsForm({ defaultCluster }: { defaultCluster?: string }) {
  const [cluster, setCluster] = useState(defaultCluster ?? 'lab');
  const [hosts, setHosts] = useState('');
  const [identity, setIdentity] = useState('');
  const [jump, setJump] = useState('');
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const ok = await addHosts({ cluster: cluster.trim(), hosts: list(hosts), identityFile: identity.trim() || undefined, jump: jump.trim() || undefined });
    if (ok) setHosts('');
  };
  return (
    <form className="cluster-form" onSubmit={(e) => void submit(e)} data-testid="add-hosts-form">
      <h4 className="panel__title">Add hosts</h4>
      <label className="field">
        <span className="field__label">Cluster</span>
        <input value={cluster} onChange={(e) => setCluster(e.target.value)} required data-testid="add-cluster-name" />
      </label>
      <label className="field">
        <span className="field__label">Hosts (user@address[:port], comma or space separated)</span>
        <input value={hosts} onChange={(e) => setHosts(e.target.value)} placeholder="alice@10.0.0.5, alice@10.0.0.6:2222" required data-testid="add-hosts" />
      </label>
      <label className="field">
        <span className="field__label">Identity file (path; optional, ssh-agent is tried first)</span>
        <input value={identity} onChange={(e) => setIdentity(e.target.value)} placeholder="~/.ssh/id_ed25519" data-testid="add-identity" />
      </label>
      <label className="field">
        <span className="field__label">Jump host (optional)</span>
        <input value={jump} onChange={(e) => setJump(e.target.value)} placeholder="bob@bastion" />
      </label>
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
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const hosts = list(names);
    await importHosts({ cluster: cluster.trim(), sshConfig: config.trim() || undefined, hosts: hosts.length ? hosts : undefined });
  };
  return (
    <form className="cluster-form" onSubmit={(e) => void submit(e)} data-testid="import-hosts-form">
      <h4 className="panel__title">Import from ssh config</h4>
      <label className="field">
        <span className="field__label">Cluster</span>
        <input value={cluster} onChange={(e) => setCluster(e.target.value)} required data-testid="import-cluster-name" />
      </label>
      <label className="field">
        <span className="field__label">Config file (default ~/.ssh/config)</span>
        <input value={config} onChange={(e) => setConfig(e.target.value)} placeholder="~/.ssh/config" data-testid="import-config" />
      </label>
      <label className="field">
        <span className="field__label">Hosts (default: every Host entry)</span>
        <input value={names} onChange={(e) => setNames(e.target.value)} placeholder="gpu1, gpu2" data-testid="import-hosts" />
      </label>
      <button type="submit" className="button" data-testid="import-hosts-submit">
        Import
      </button>
    </form>
  );
}
