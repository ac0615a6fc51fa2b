import type { TrustPrompt } from '../../protocol/clusters.js';
import type { TrustRequest } from '../deploy/ssh/connectHost.js';

/** How long an unknown host key waits for the user before it is refused (nobody is looking). */
const TRUST_WAIT_MS = 5 * 60_000;

/**
 * Trust on first use in the studio (the Cluster view's connection test, a deploy): an unknown host key
 * is held as a question (its SHA256 fingerprint) until the user trusts or refuses it in the trust
 * dialog; each key (address, port, fingerprint) is asked once, even for hosts behind one jump host.
 */
export class HostKeyQuestions {
  private readonly pending = new Map<string, { prompt: TrustPrompt; resolve: (trust: boolean) => void }>();
  private readonly decisions = new Map<string, Promise<boolean>>();

  constructor(private readonly nextPromptId: () => string) {}

  ask = (r: TrustRequest): Promise<boolean> => {
    const key = `${r.address}:${r.port} ${r.fingerprint}`;
    let decision = this.decisions.get(key);
    if (!decision) {
      decision = new Promise<boolean>((resolve) => {
        const id = this.nextPromptId();
        const timer = setTimeout(() => this.answer(id, false), TRUST_WAIT_MS);
        timer.unref?.();
        this.pending.set(id, {
          prompt: { id, where: r.where, keyType: r.keyType, fingerprint: r.fingerprint },
          resolve: (trust) => {
            clearTimeout(timer);
            resolve(trust);
          },
        });
      });
      this.decisions.set(key, decision);
    }
    return decision;
  };

  /** False when no such question is waiting (answered already, timed out, or never asked). */
  answer(promptId: string, trust: boolean): boolean {
    const pending = this.pending.get(promptId);
    if (!pending) return false;
    this.pending.delete(promptId);
    pending.resolve(trust);
    return true;
  }

  prompts(): TrustPrompt[] {
    return [...this.pending.values()].map((p) => p.prompt);
  }

  /** Refuse every question still waiting (the studio is closing). */
  refuseAll(): void {
    for (const id of [...this.pending.keys()]) this.answer(id, false);
  }
}
