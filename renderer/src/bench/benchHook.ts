import { flushSync } from 'react-dom';
import type { JobEvent } from '../../../engine/protocol/events';
import { applyEvents, emptyMetrics } from '../store/metrics';
import type { JobMetrics } from '../store/metrics';
import { useStudio } from '../store/studioStore';
import type { StudioState } from '../store/studioStore';

/**
 * `window.__shoalBench`: the one test hook of the studio, for `npm run bench -- ui` (bench/ui.ts). It is
 * installed only in the browser shell (never in Electron) and only measures: it draws synthetic metrics
 * in the Monitor's charts and reports how long the update took. Everything else the benchmark does
 * through the page like a user (open a model.json with the file input, drag and wheel the graph).
 *
 * `chartUpdate(points, updates)` shows a job with `points` steps of loss and throughput, then folds one
 * step event into it `updates` times as the store folds a live job's events (applyEvents); each update
 * is timed from the store change until the charts have drawn it (timedChange). The job is removed afterwards.
 */
export interface ShoalBench {
  /** updateMs = changeMs (store and React) + frameMs (the charts' frame callbacks and uPlot's draws), per update. */
  chartUpdate(points: number, updates: number): Promise<{ firstMs: number; updateMs: number[]; changeMs: number[]; frameMs: number[]; drawnPoints: string | null }>;
  /**
   * Show a finished job of `points` steps, an evaluation every `points / 20` steps, and a resize, a
   * lost agent and a restart (at 30%, 55% and 80% of the steps), and leave it on screen: for the chart
   * benchmark (bench/charts.ts) and the charts' end-to-end test. `clearJob()` puts back the job before.
   */
  showJob(points: number): void;
  clearJob(): void;
  /**
   * A live job at full speed: a job of `points` steps gets one more step in every animation frame for
   * `frames` frames (each drawn by the charts in the frame after); returns the frame-to-frame times.
   */
  liveFrames(points: number, frames: number): Promise<number[]>;
}

declare global {
  interface Window {
    __shoalBench?: ShoalBench;
  }
}

/** The synthetic step `i` (1-based) of a job: a decaying, slightly noisy loss and a wavy throughput. */
function stepEvent(i: number, points: number): Extract<JobEvent, { type: 'step' }> {
  const loss = 2.3 * Math.exp(-(i - 1) / (points / 4)) + 0.05 * Math.sin((i - 1) / 7) + (0.02 * (((i - 1) * 7919) % 13)) / 13;
  return { type: 'step', step: i, epoch: i / 1000, loss, samplesPerSec: 900 + 80 * Math.sin((i - 1) / 50), stepMs: 20, elapsedMs: 20 * i };
}

/** A finished job of `points` steps, folded from its step events by the store as a live job's are. */
function jobOf(points: number, extra: Partial<JobMetrics> = {}): NonNullable<StudioState['job']> {
  const events = Array.from({ length: points }, (_, i) => stepEvent(i + 1, points));
  const metrics = { ...applyEvents(emptyMetrics(), events), state: 'finished' as const, ...extra };
  return { id: 'bench', model: 'bench', planLabel: 'bench', agents: 1, metrics };
}

/**
 * One store change timed until the charts have drawn it: the change itself (React render and commit
 * done synchronously with flushSync), then the next animation frame, where the charts take in the new
 * points and uPlot draws (its draw runs in a microtask after each chart's frame callback). A frame
 * callback queued before the change and one queued after it bracket the charts' callbacks in that
 * frame, so the time waited for the frame itself is not counted.
 */
async function timedChange(change: () => void, drawnStep: number): Promise<{ changeMs: number; frameMs: number }> {
  let frameStart = 0;
  requestAnimationFrame(() => (frameStart = performance.now()));
  const t0 = performance.now();
  flushSync(change);
  const changeMs = performance.now() - t0;
  const frameEnd = await new Promise<number>((resolve) => requestAnimationFrame(() => resolve(performance.now())));
  const drawn = document.querySelector('[data-testid="loss-chart"]')?.getAttribute('data-x-max');
  if (drawn !== String(drawnStep)) throw new Error(`chartUpdate: the loss chart shows steps up to ${drawn}, not ${drawnStep}, after the frame it was timed in: the measure would miss its work.`);
  return { changeMs, frameMs: frameEnd - frameStart };
}

const nextFrame = () => new Promise<void>((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0)));

let shownOver: { job: ReturnType<typeof useStudio.getState>['job'] } | undefined;

const hook: ShoalBench = {
  showJob(points) {
    shownOver ??= { job: useStudio.getState().job };
    const every = Math.max(1, Math.floor(points / 20));
    const evalSteps = Array.from({ length: Math.floor(points / every) }, (_, i) => (i + 1) * every);
    const at = (f: number) => 1 + Math.floor(f * (points - 1));
    const markers = [
      { step: at(0.3), label: 'generation 2: resize: +1 agent' },
      { step: at(0.55), label: 'generation 3: lost rank 1 (127.0.0.1)' },
      { step: at(0.8), label: 'generation 4: resumed from a checkpoint' },
    ];
    const accuracy = evalSteps.map((_, i) => 97 - 40 * Math.exp(-i / 4));
    useStudio.getState().set({ job: jobOf(points, { evalSteps, accuracy, validationLoss: evalSteps.map(() => NaN), markers }) });
  },
  clearJob() {
    if (shownOver) useStudio.getState().set({ job: shownOver.job });
    shownOver = undefined;
  },
  async liveFrames(points, frames) {
    const before = useStudio.getState().job;
    useStudio.getState().set({ job: jobOf(points, { state: 'running' }) });
    await nextFrame();
    const deltas = await new Promise<number[]>((resolve) => {
      const times: number[] = [];
      const tick = (now: number) => {
        times.push(now);
        if (times.length > frames) return resolve(times.slice(1).map((t, i) => t - times[i]));
        const event = stepEvent(points + times.length, points);
        const shown = useStudio.getState().job!;
        flushSync(() => useStudio.getState().set({ job: { ...shown, metrics: applyEvents(shown.metrics, [event]) } }));
        requestAnimationFrame(tick);
      };
      requestAnimationFrame(tick);
    });
    useStudio.getState().set({ job: before });
    return deltas;
  },
  async chartUpdate(points, updates) {
    const before = useStudio.getState().job;
    const job = jobOf(points, { state: 'running' });
    const first = await timedChange(() => useStudio.getState().set({ job }), points);
    await nextFrame();
    const [updateMs, changeMs, frameMs]: number[][] = [[], [], []];
    for (let k = 1; k <= updates; k++) {
      // As a live job's events arrive (renderer/src/store/actions.ts): folded into the shown job's metrics.
      const event = stepEvent(points + k, points);
      const timed = await timedChange(() => {
        const shown = useStudio.getState().job!;
        useStudio.getState().set({ job: { ...shown, metrics: applyEvents(shown.metrics, [event]) } });
      }, points + k);
      updateMs.push(timed.changeMs + timed.frameMs);
      changeMs.push(timed.changeMs);
      frameMs.push(timed.frameMs);
      await nextFrame();
    }
    const drawnPoints = document.querySelector('[data-testid="loss-chart"]')?.getAttribute('data-points') ?? null;
    useStudio.getState().set({ job: before });
    return { firstMs: first.changeMs + first.frameMs, updateMs, changeMs, frameMs, drawnPoints };
  },
};

/** Install the hook once the studio knows its shell: the browser shell only. */
export function installBenchHook(): void {
  if (useStudio.getState().info?.shell === 'web') window.__shoalBench = hook;
}
