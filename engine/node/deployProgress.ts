import type { PreparedTarget, PrepareEvent } from './deploy/launcher.js';
import type { DeployHostView } from '../protocol/deploy.js';

const MAX_PROGRESS_LINES = 20;

/**
 * Per-host progress of a deploy as the studio shows it: each step's latest state per host (connect and
 * probe, upload with bytes, GPU runtime, ready), and each host's outcome. One host's failure is
 * recorded for that host only; the others keep reporting.
 */
export class DeployProgress {
  private readonly hosts = new Map<string, DeployHostView>();

  constructor(targets: readonly string[]) {
    for (const t of targets) this.hosts.set(t, { host: t, steps: [] });
  }

  update(e: PrepareEvent): void {
    const view = this.host(e.target);
    const at = view.steps.findIndex((s) => s.step === e.step);
    const progress = at >= 0 ? (view.steps[at].progress ?? []) : [];
    // Progress lines are kept (bounded) so that a view polling now and then still sees the bytes go up.
    if (e.status === 'progress') progress.push(e.detail);
    const step = { step: e.step, status: e.status, detail: e.detail, ...(progress.length ? { progress: progress.slice(-MAX_PROGRESS_LINES) } : {}) };
    if (at >= 0) view.steps[at] = step;
    else view.steps.push(step);
    if (e.step === 'ready' && e.status === 'ok') view.ok = true;
    if (e.status === 'fail') Object.assign(view, { ok: false, error: e.detail });
  }

  /** The launcher's verdict per host (the same errors the CLI prints). */
  settle(prepared: readonly PreparedTarget[]): void {
    for (const p of prepared) {
      const view = this.host(p.target);
      view.ok = p.ok;
      if (!p.ok && p.error) view.error = p.error;
    }
  }

  view(): DeployHostView[] {
    return [...this.hosts.values()].map((h) => ({ ...h, steps: h.steps.map((s) => ({ ...s, ...(s.progress ? { progress: [...s.progress] } : {}) })) }));
  }

  private host(name: string): DeployHostView {
    let view = this.hosts.get(name);
    if (!view) {
      view = { host: name, steps: [] };
      this.hosts.set(name, view);
    }
    return view;
  }
}
