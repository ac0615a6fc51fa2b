import type { TrustRequest } from '../deploy/ssh/connectHost.js';
import { preflightHosts, type HostPreflight, type PreflightEvent } from '../deploy/ssh/preflight.js';
import type { ClusterTestStatus, HostTestView, SurveyView } from '../../protocol/clusters.js';
import { HostKeyQuestions } from './hostKeyQuestions.js';
import type { SshCluster } from './clusterStore.js';
import { hostFacts } from './clusterTestRecord.js';
import { storeClusterTest } from './storeClusterTest.js';
import { surveyAfterPreflight, type SurveyOutcome } from './surveyAfterPreflight.js';
import type { SurveyEvent } from './surveyLinks.js';

/** Finished tests kept for the view to read; older ones are forgotten. */
const KEEP_FINISHED = 16;

class ClusterTestRun {
  state: 'running' | 'done' = 'running';
  readonly hosts = new Map<string, HostTestView>();
  /** Unknown host keys waiting for the user's answer in the trust dialog. */
  readonly questions: HostKeyQuestions;
  /** The link survey after preflight (clusters of two or more hosts). */
  survey: SurveyView | undefined;
  preflightDone = false;
  /** What the survey came to, for the stored test. */
  surveyOutcome: SurveyOutcome | undefined;
  /** Why the finished test could not be stored with the cluster (clusters.json unreadable). */
  notStored: string | undefined;

  constructor(
    readonly id: string,
    readonly cluster: SshCluster,
    nextPromptId: () => string,
  ) {
    this.questions = new HostKeyQuestions(nextPromptId);
    for (const h of cluster.hosts) this.hosts.set(h.alias, { host: h.alias, steps: [] });
    if (cluster.hosts.length >= 2) this.survey = { state: 'waiting', steps: [] };
  }

  surveyProgress(e: SurveyEvent): void {
    const survey = (this.survey ??= { state: 'running', steps: [] });
    survey.state = 'running';
    const at = survey.steps.findIndex((s) => s.host === e.host && s.step === e.step);
    // Upload byte counts update the running step's detail; they are not a state of their own.
    const step = { host: e.host, step: e.step, status: e.status === 'progress' ? 'running' : e.status, detail: e.detail } as const;
    if (at >= 0) survey.steps[at] = step;
    else survey.steps.push(step);
  }

  /** Survey the hosts that passed preflight; the matrix is stored for the cluster (see surveyAfterPreflight). */
  async runSurvey(results: HostPreflight[]): Promise<void> {
    const outcome = await surveyAfterPreflight(this.cluster, results, { onProgress: (e) => this.surveyProgress(e), trustRequest: this.trustRequest });
    this.surveyOutcome = outcome;
    if (!outcome) return;
    const steps = this.survey?.steps ?? [];
    if ('profile' in outcome) this.survey = { state: 'done', steps, profile: outcome.profile };
    else if ('skipped' in outcome) this.survey = { state: 'skipped', steps, detail: outcome.skipped };
    else this.survey = { state: 'failed', steps, detail: outcome.error };
  }

  progress(e: PreflightEvent): void {
    const view = this.hosts.get(e.host) ?? { host: e.host, steps: [] };
    this.hosts.set(e.host, view);
    const at = view.steps.findIndex((s) => s.step === e.step);
    const step = { step: e.step, status: e.status, detail: e.detail };
    if (at >= 0) view.steps[at] = step;
    else view.steps.push(step);
  }

  trustRequest = (r: TrustRequest): Promise<boolean> => this.questions.ask(r);

  finish(results: HostPreflight[]): void {
    for (const r of results) {
      const view = this.hosts.get(r.host) ?? { host: r.host, steps: [] };
      const f = r.facts;
      this.hosts.set(r.host, {
        ...view,
        where: r.where,
        ok: r.ok,
        steps: r.steps.map((s) => ({ step: s.step, status: s.status, detail: s.detail })),
        facts: f && hostFacts(f),
      });
    }
    this.preflightDone = true;
  }

  /** Store what the test found with the cluster, so that it holds after the studio restarts. */
  store(results: HostPreflight[]): void {
    try {
      storeClusterTest(this.cluster, results, this.surveyOutcome);
    } catch (err) {
      this.notStored = (err as Error).message;
    }
  }

  status(): ClusterTestStatus {
    const hosts = [...this.hosts.values()];
    return {
      id: this.id,
      cluster: this.cluster.name,
      state: this.state,
      hosts,
      trust: this.questions.prompts(),
      // Known once preflight is over, while the survey may still run.
      ...(this.preflightDone || this.state === 'done' ? { ready: hosts.filter((h) => h.ok).length } : {}),
      ...(this.survey ? { survey: this.survey } : {}),
      ...(this.notStored ? { notStored: this.notStored } : {}),
    };
  }
}

/**
 * Connection tests the studio started: preflight of every host of a cluster (8 at a time, as the CLI),
 * its progress read by polling, and unknown host keys held until the user trusts or refuses them.
 */
export class ClusterTests {
  private readonly runs = new Map<string, ClusterTestRun>();
  private count = 0;
  private prompts = 0;

  start(cluster: SshCluster): string {
    if (cluster.hosts.length === 0) throw new Error(`Cluster ${cluster.name} has no hosts. Add some first.`);
    const id = `test-${++this.count}`;
    const run = new ClusterTestRun(id, cluster, () => `trust-${++this.prompts}`);
    this.runs.set(id, run);
    void preflightHosts(cluster.hosts, { onProgress: (e) => run.progress(e), trustRequest: run.trustRequest })
      .then(
        async (results) => {
          run.finish(results);
          await run.runSurvey(results).catch((err: Error) => {
            run.survey = { state: 'failed', steps: run.survey?.steps ?? [], detail: err.message };
            run.surveyOutcome = { error: err.message };
          });
          // Before the test reads as done, so that the listing a view fetches then carries it.
          run.store(results);
        },
        (err: Error) => {
          for (const h of run.hosts.values()) if (h.ok === undefined) h.steps.push({ step: 'reachable', status: 'fail', detail: err.message });
          if (run.survey) run.survey = { state: 'skipped', steps: [], detail: 'preflight did not finish' };
        },
      )
      .catch((err: Error) => {
        run.notStored = err.message;
      })
      .finally(() => {
        run.state = 'done';
      });
    this.forgetOld();
    return id;
  }

  status(id: string): ClusterTestStatus {
    return this.run(id).status();
  }

  answer(id: string, promptId: string, trust: boolean): void {
    if (!this.run(id).questions.answer(promptId, trust)) throw new Error(`No host key question ${promptId} is waiting in ${id}: it was answered already or timed out.`);
  }

  /** Refuse every unknown key still waiting (the studio is closing). */
  close(): void {
    for (const run of this.runs.values()) run.questions.refuseAll();
  }

  private run(id: string): ClusterTestRun {
    const run = this.runs.get(id);
    if (!run) throw new Error(`No connection test ${id} in this studio session.`);
    return run;
  }

  private forgetOld(): void {
    const done = [...this.runs.values()].filter((r) => r.state === 'done');
    for (const r of done.slice(0, Math.max(0, done.length - KEEP_FINISHED))) this.runs.delete(r.id);
  }
}
