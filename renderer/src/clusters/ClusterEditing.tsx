import { useEffect, useRef, useState, type FormEvent, type ReactNode } from 'react';
import { ClusterNameSchema, EditHostRequestSchema, type HostView } from '../../../engine/protocol/clusters';
import { refusalField } from './ClusterForms';
import { editHost, removeCluster, removeHost, renameCluster } from './clustersStore';
import { fieldErrors } from './fieldErrors';
import { FieldError, invalidProps } from './FieldError';

/** A question before something is removed; Escape answers No (and leaves the Clusters view open). */
export function Confirm({ testId, children, yes, onYes, onNo }: { testId: string; children: ReactNode; yes: string; onYes: () => void; onNo: () => void }) {
  const no = useRef<HTMLButtonElement>(null);
  useEffect(() => no.current?.focus(), []);
  return (
    <div
      className="cluster-confirm"
      role="alertdialog"
      aria-modal="true"
      data-testid={testId}
      onKeyDown={(e) => {
        if (e.key !== 'Escape') return;
        e.stopPropagation();
        e.nativeEvent.stopImmediatePropagation();
        onNo();
      }}
    >
      <p>{children}</p>
      <button type="button" className="button button--danger" onClick={onYes} data-testid={`${testId}-yes`}>
        {yes}
      </button>{' '}
      <button type="button" className="button" ref={no} onClick={onNo} data-testid={`${testId}-no`}>
        Cancel
      </button>
    </div>
  );
}

/** Rename or remove the selected cluster (its measured links follow the rename and go with it). */
export function ClusterActions({ name, disabled }: { name: string; disabled: boolean }) {
  const [mode, setMode] = useState<'rename' | 'remove'>();
  const [to, setTo] = useState(name);
  const [error, setError] = useState<string>();
  useEffect(() => {
    setMode(undefined);
    setTo(name);
    setError(undefined);
  }, [name]);
  const checked = ClusterNameSchema.safeParse(to.trim());
  const invalid = checked.success ? undefined : checked.error.issues[0]?.message;
  const rename = async (e: FormEvent) => {
    e.preventDefault();
    if (invalid) return setError(invalid);
    const refused = await renameCluster(name, to.trim());
    setError(refused);
    if (!refused) setMode(undefined);
  };
  const remove = async () => {
    const refused = await removeCluster(name);
    setError(refused);
    setMode(undefined);
  };
  return (
    <div className="cluster-actions">
      {mode !== 'rename' && (
        <>
          <button type="button" className="button button--quiet" disabled={disabled} onClick={() => setMode('rename')} data-testid="rename-cluster">
            Rename
          </button>
          <button type="button" className="button button--quiet button--danger" disabled={disabled} onClick={() => setMode('remove')} data-testid="remove-cluster">
            Remove cluster…
          </button>
        </>
      )}
      {mode === 'rename' && (
        <form className="cluster-inline" onSubmit={(e) => void rename(e)} noValidate>
          <label className="field">
            <span className="field__label">New name</span>
            <input value={to} onChange={(e) => (setTo(e.target.value), setError(undefined))} {...invalidProps('rename-cluster-error', error ?? invalid)} data-testid="rename-cluster-input" autoFocus />
            <FieldError id="rename-cluster-error" message={error ?? invalid} />
          </label>
          <button type="submit" className="button" data-testid="rename-cluster-save">
            Save
          </button>{' '}
          <button type="button" className="button button--quiet" onClick={() => setMode(undefined)}>
            Cancel
          </button>
        </form>
      )}
      {mode === 'remove' && (
        <Confirm testId="remove-cluster-confirm" yes="Remove cluster" onYes={() => void remove()} onNo={() => setMode(undefined)}>
          Remove cluster <strong>{name}</strong> and its measured links? Its hosts&apos; keys and known_hosts entries stay as they are.
        </Confirm>
      )}
      {error && mode !== 'rename' && (
        <span className="error-text" role="alert">
          {error}
        </span>
      )}
    </div>
  );
}

const fieldIds = { address: 'edit-host-address-error', identityFile: 'edit-host-identity-error', jump: 'edit-host-jump-error' };

/** Change a host's address, key or jump chain, checked at each field as the Add form is. */
export function HostEditForm({ cluster, host, onDone }: { cluster: string; host: HostView; onDone: () => void }) {
  const [address, setAddress] = useState(`${host.user}@${host.address.includes(':') ? `[${host.address}]` : host.address}:${host.port}`);
  const [identity, setIdentity] = useState(host.identityFiles[0] ?? '');
  const [jump, setJump] = useState(host.jump.join(', '));
  const [refusal, setRefusal] = useState<{ field: string; message: string }>();
  const request = { cluster, host: host.alias, address, identityFile: identity.trim(), jump: jump.trim() };
  const { errors } = fieldErrors(EditHostRequestSchema, request);
  const shown = (field: 'address' | 'identityFile' | 'jump') => errors[field] ?? (refusal?.field === (field === 'address' ? 'hosts' : field) ? refusal.message : undefined);
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const parsed = EditHostRequestSchema.safeParse(request);
    if (!parsed.success) return;
    const refused = await editHost(parsed.data);
    if (refused) setRefusal({ field: refusalField(refused), message: refused });
    else onDone();
  };
  return (
    <form className="cluster-inline cluster-inline--host" onSubmit={(e) => void submit(e)} noValidate data-testid="edit-host-form">
      <label className="field">
        <span className="field__label">Address (user@address[:port])</span>
        <input value={address} onChange={(e) => (setAddress(e.target.value), setRefusal(undefined))} {...invalidProps(fieldIds.address, shown('address'))} data-testid="edit-host-address" autoFocus />
        <FieldError id={fieldIds.address} message={shown('address')} />
      </label>
      <label className="field">
        <span className="field__label">Identity file (empty: ssh-agent and default keys)</span>
        <input value={identity} onChange={(e) => (setIdentity(e.target.value), setRefusal(undefined))} {...invalidProps(fieldIds.identityFile, shown('identityFile'))} data-testid="edit-host-identity" />
        <FieldError id={fieldIds.identityFile} message={shown('identityFile')} />
      </label>
      <label className="field">
        <span className="field__label">Jump hosts (empty: direct)</span>
        <input value={jump} onChange={(e) => (setJump(e.target.value), setRefusal(undefined))} {...invalidProps(fieldIds.jump, shown('jump'))} data-testid="edit-host-jump" />
        <FieldError id={fieldIds.jump} message={shown('jump')} />
      </label>
      <FieldError id="edit-host-error" message={refusal?.field === 'form' ? refusal.message : undefined} />
      <div>
        <button type="submit" className="button" data-testid="edit-host-save">
          Save host
        </button>{' '}
        <button type="button" className="button button--quiet" onClick={onDone}>
          Cancel
        </button>
      </div>
    </form>
  );
}

/** Edit or remove one host of a cluster. */
export function HostActions({ cluster, host, disabled, onEdit }: { cluster: string; host: HostView; disabled: boolean; onEdit: () => void }) {
  const [confirming, setConfirming] = useState(false);
  const [error, setError] = useState<string>();
  return (
    <div className="cluster-actions">
      <button type="button" className="button button--quiet" disabled={disabled} onClick={onEdit} data-testid="edit-host">
        Edit
      </button>
      <button type="button" className="button button--quiet button--danger" disabled={disabled} onClick={() => setConfirming(true)} data-testid="remove-host">
        Remove…
      </button>
      {confirming && (
        <Confirm
          testId="remove-host-confirm"
          yes="Remove host"
          onYes={() => {
            setConfirming(false);
            void removeHost(cluster, host.alias).then(setError);
          }}
          onNo={() => setConfirming(false)}
        >
          Remove <strong>{host.alias}</strong> from {cluster}?
        </Confirm>
      )}
      {error && (
        <span className="error-text" role="alert">
          {error}
        </span>
      )}
    </div>
  );
}
