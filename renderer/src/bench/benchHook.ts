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

const hook: ShoalBench = {
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
