import { flushSync } from 'react-dom';
import { emptyMetrics } from '../store/metrics';
import { useStudio } from '../store/studioStore';

/**
 * `window.__shoalBench`: the one test hook of the studio, for `npm run bench -- ui` (bench/ui.ts). It is
 * installed only in the browser shell (never in Electron) and only measures: it draws synthetic metrics
 * in the Monitor's charts and reports how long the update took. Everything else the benchmark does
 * through the page like a user (open a model.json with the file input, drag and wheel the graph).
 *
 * `chartUpdate(points, updates)` shows a finished job with `points` steps of loss and throughput, then
 * appends one step `updates` times; each update is timed from the store change (React render and commit
 * done synchronously with flushSync) until uPlot has drawn (its redraw runs in a microtask after
 * setData). The arrays are built before the clock starts. The job is removed afterwards.
 */
export interface ShoalBench {
  chartUpdate(points: number, updates: number): Promise<{ firstMs: number; updateMs: number[]; drawnPoints: string | null }>;
  /**
   * Show a finished job of `points` steps, an evaluation every `points / 20` steps, and a resize, a
   * lost agent and a restart (at 30%, 55% and 80% of the steps), and leave it on screen: for the chart
   * benchmark (bench/charts.ts) and the charts' end-to-end test. `clearJob()` puts back the job before.
   */
  showJob(points: number): void;
  clearJob(): void;
}

declare global {
  interface Window {
    __shoalBench?: ShoalBench;
  }
}

function series(n: number): { steps: number[]; loss: number[]; rate: number[] } {
  const steps = new Array<number>(n);
  const loss = new Array<number>(n);
  const rate = new Array<number>(n);
  for (let i = 0; i < n; i++) {
    steps[i] = i + 1;
    loss[i] = 2.3 * Math.exp(-i / (n / 4)) + 0.05 * Math.sin(i / 7) + 0.02 * ((i * 7919) % 13) / 13;
    rate[i] = 900 + 80 * Math.sin(i / 50);
  }
  return { steps, loss, rate };
}

async function timedSet(steps: number[], loss: number[], rate: number[]): Promise<number> {
  const metrics = { ...emptyMetrics(), state: 'finished' as const, steps, loss, samplesPerSec: rate };
  const t0 = performance.now();
  flushSync(() => useStudio.getState().set({ job: { id: 'bench', model: 'bench', planLabel: 'bench', agents: 1, metrics } }));
  // uPlot commits setData in a microtask queued during the commit above: this await runs after it.
  await Promise.resolve();
  return performance.now() - t0;
}

const nextFrame = () => new Promise<void>((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0)));

let shownOver: { job: ReturnType<typeof useStudio.getState>['job'] } | undefined;

const hook: ShoalBench = {
  showJob(points) {
    shownOver ??= { job: useStudio.getState().job };
    const { steps, loss, rate } = series(points);
    const every = Math.max(1, Math.floor(points / 20));
    const evalSteps = steps.filter((s) => s % every === 0);
    const at = (f: number) => steps[Math.floor(f * (points - 1))];
    const markers = [
      { step: at(0.3), label: 'generation 2: resize: +1 agent' },
      { step: at(0.55), label: 'generation 3: lost rank 1 (127.0.0.1)' },
      { step: at(0.8), label: 'generation 4: resumed from a checkpoint' },
    ];
    const accuracy = evalSteps.map((_, i) => 97 - 40 * Math.exp(-i / 4));
    const metrics = { ...emptyMetrics(), state: 'finished' as const, steps, loss, samplesPerSec: rate, evalSteps, accuracy, validationLoss: evalSteps.map(() => NaN), markers };
    useStudio.getState().set({ job: { id: 'bench', model: 'bench', planLabel: 'bench', agents: 1, metrics } });
  },
  clearJob() {
    if (shownOver) useStudio.getState().set({ job: shownOver.job });
    shownOver = undefined;
  },
  async chartUpdate(points, updates) {
    const before = useStudio.getState().job;
    const base = series(points + updates);
    const firstMs = await timedSet(base.steps.slice(0, points), base.loss.slice(0, points), base.rate.slice(0, points));
    await nextFrame();
    const updateMs: number[] = [];
    for (let k = 1; k <= updates; k++) {
      const n = points + k;
      const [steps, loss, rate] = [base.steps.slice(0, n), base.loss.slice(0, n), base.rate.slice(0, n)];
      updateMs.push(await timedSet(steps, loss, rate));
      await nextFrame();
    }
    const drawnPoints = document.querySelector('[data-testid="loss-chart"]')?.getAttribute('data-points') ?? null;
    useStudio.getState().set({ job: before });
    return { firstMs, updateMs, drawnPoints };
  },
};

/** Install the hook once the studio knows its shell: the browser shell only. */
export function installBenchHook(): void {
  if (useStudio.getState().info?.shell === 'web') window.__shoalBench = hook;
}
