import type { TrustPrompt } from '../../../engine/protocol/clusters';
import { answerTrust } from './clustersStore';

/**
 * Trust on first use: a host presented a key that neither ~/.ssh/known_hosts nor Shoal's store knows.
 * Shows its SHA256 fingerprint and how to check it on the host; Trust records it, Refuse fails the host.
 */
export function TrustDialog({ prompt, onAnswer }: { prompt: TrustPrompt; onAnswer?: (trust: boolean) => void }) {
  // A deploy answers its own questions (answerDeployHostKey); the connection test is the default.
  const answer = onAnswer ?? ((trust: boolean) => void answerTrust(prompt.id, trust));
  return (
    <div className="trust-dialog" role="alertdialog" aria-modal="true" aria-labelledby="trust-title" data-testid="trust-dialog">
      <div className="trust-dialog__box">
        <h3 id="trust-title">Unknown host key</h3>
        <p>
          <strong>{prompt.where}</strong> presented a host key that is not in <code>~/.ssh/known_hosts</code> or Shoal&apos;s store yet:
        </p>
        <code className="trust-dialog__fingerprint" data-testid="trust-fingerprint">
          {prompt.keyType} {prompt.fingerprint}
        </code>
        <p className="muted">
          Compare it with the host&apos;s own: run <code>ssh-keygen -l -f /etc/ssh/ssh_host_ed25519_key.pub</code> on the host (or ask its administrator). Trust it only
          if they match; a key that changes later is always refused.
        </p>
        <div className="trust-dialog__actions">
          <button type="button" className="button" onClick={() => answer(false)} data-testid="trust-refuse">
            Refuse
          </button>
          <button type="button" className="button button--primary" onClick={() => answer(true)} data-testid="trust-accept" autoFocus>
            Trust this key
          </button>
        </div>
      </div>
    </div>
  );
}
