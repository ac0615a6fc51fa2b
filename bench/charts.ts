/**
 * Chart benchmark: do the Monitor's charts keep up at 100,000 steps?
 *
 *   npm run bench -- charts [--points 100000] [--runs 40] [--no-build]
 *
 * Drives the browser shell (built first unless --no-build) in Debian's Chromium, headless with software
 * rendering, through Playwright. window.__shoalBench.showJob (renderer/src/bench/benchHook.ts) shows a
 * finished job of `--points` steps with 20 evaluations and three generation markers in the Monitor's
 * three charts (loss, validation accuracy, throughput). Each chart reports what it did for its last
 * frame (renderer/src/charts/LineChart.tsx): `data-refresh-ms` (smoothing when the data or weight
 * changed, min/max decimation of what is in view per pixel column, handing it to uPlot) and
 * `data-draw-ms` (uPlot's canvas draw, markers included). Measured, `--runs` times each:
 * 1. smoothing slider: one input event moves the weight of every chart; the work is the sum over the
 *    charts of refresh + draw (each recomputes its EMA over all points and decimates again); then a
 *    drag: one input event per animation frame for 120 frames, with the frame-to-frame times;
 * 2. zoom: a drag-select over 20% of the loss chart, then Reset: refresh + draw of that chart;
 * 3. live update: `chartUpdate` folds one step event into a job of `--points` steps as the store folds a
 *    live job's events, and times the store change with React's render, then the charts' work in the
 *    next animation frame (new points smoothed and indexed, decimation, uPlot's draw);
 *    and live frames: one step more in every animation frame for 120 frames, with the frame-to-frame times;
 * 4. hover work: a mousemove on the loss chart's plot, dispatched in the page once per frame across it,
 *    timed with the style and layout it causes (uPlot's cursor in all three synced charts, the readouts);
 * 5. hover frames: the real pointer sweeps the loss chart while the page records requestAnimationFrame
 *    deltas: dropped frames (a delta above 1.5 frames) and p95.
 * The budget is one frame at 60 Hz, 16.7 ms: the physical limit of a display that refreshes 60 times
 * a second. Prints the table and writes bench/results/charts.json.
 */
import { execFileSync } from 'node:child_process';
import { loadavg } from 'node:os';
import type { Page } from '@playwright/test';
import { args, numberFlag as flag } from './lib/args.js';
import { report, type Column } from './lib/report.js';
import { launchChromium, startWebStudio } from './lib/webStudio.js';
// The type of window.__shoalBench (a global augmentation; nothing is imported at run time).
import type {} from '../renderer/src/bench/benchHook.js';

const POINTS = flag('points', 100_000);
const RUNS = flag('runs', 40);
const FRAME_MS = 1000 / 60;
const CHARTS = ['loss-chart', 'accuracy-chart', 'throughput-chart'];

const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))] : NaN;
};

interface Row {
  measure: string;
  /** The fastest run: on a loaded machine, the nearest to the work itself without preemption. */
  min: number;
  median: number;
  p95: number;
  max: number;
  budget: number;
  verdict: string;
  detail: string;
}

const row = (measure: string, xs: number[], detail: string): Row => {
  const p95 = quantile(xs, 0.95);
  return { measure, min: Math.min(...xs), median: quantile(xs, 0.5), p95, max: Math.max(...xs), budget: FRAME_MS, verdict: p95 <= FRAME_MS ? 'within a frame' : 'over a frame', detail };
};

/** Refresh + draw of the named charts, as each reported for its last frame. */
const chartWork = (page: Page, ids: string[]) =>
  page.evaluate((list) => list.map((id) => {
    const el = document.querySelector(`[data-testid="${id}"]`);
    return { refresh: Number(el?.getAttribute('data-refresh-ms') ?? NaN), draw: Number(el?.getAttribute('data-draw-ms') ?? NaN), drawn: Number(el?.getAttribute('data-drawn') ?? NaN) };
  }), ids);

/** After the next frame has been drawn. */
const nextFrame = (page: Page) => page.evaluate('new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)))');

async function showJob(page: Page): Promise<void> {
  await page.evaluate((n) => window.__shoalBench!.showJob(n), POINTS);
  const tab = page.getByRole('tab', { name: /monitor/i });
  if (await tab.count()) await tab.first().click();
  await page.getByTestId('loss-chart').locator('.u-over').scrollIntoViewIfNeeded();
  // Drawn: the x scale reaches the last step.
  await page.waitForFunction((n) => document.querySelector('[data-testid="loss-chart"]')?.getAttribute('data-x-max') === String(n), POINTS);
}

async function smoothingRuns(page: Page): Promise<{ work: number[]; refresh: number[]; draw: number[]; drawn: number }> {
  const work: number[] = [];
  const refresh: number[] = [];
  const draw: number[] = [];
  let drawn = 0;
  for (let k = 0; k < RUNS; k++) {
    // A new weight each time (0.30 … 0.99): every chart smooths and decimates again.
    await page.getByTestId('loss-chart-smoothing').evaluate((el, v) => {
      const input = el as HTMLInputElement;
      Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value')!.set!.call(input, String(v));
      input.dispatchEvent(new Event('input', { bubbles: true }));
    }, 0.3 + (0.69 * k) / RUNS);
    await nextFrame(page);
    const charts = await chartWork(page, ['loss-chart', 'throughput-chart']);
    work.push(charts.reduce((sum, c) => sum + c.refresh + c.draw, 0));
    refresh.push(charts.reduce((sum, c) => sum + c.refresh, 0));
    draw.push(charts.reduce((sum, c) => sum + c.draw, 0));
    drawn = charts[0].drawn;
  }
  return { work, refresh, draw, drawn };
}

/**
 * A drag of the smoothing slider as a hand does it: one input event per animation frame for 120 frames
 * (0.30 → 0.99), each moving every chart's weight; the frame-to-frame times seen by requestAnimationFrame.
 */
function sliderFrames(page: Page): Promise<number[]> {
  return page.getByTestId('loss-chart-smoothing').evaluate(async (el) => {
    const input = el as HTMLInputElement;
    const setValue = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value')!.set!;
    const frames: number[] = [];
    let last = await new Promise<number>((resolve) => requestAnimationFrame(resolve));
    for (let i = 0; i < 120; i++) {
      setValue.call(input, String(0.3 + (0.69 * i) / 119));
      input.dispatchEvent(new Event('input', { bubbles: true }));
      const now = await new Promise<number>((resolve) => requestAnimationFrame(resolve));
      frames.push(now - last);
      last = now;
    }
    return frames;
  });
}

async function zoomRuns(page: Page): Promise<{ zoom: number[]; reset: number[] }> {
  const chart = page.getByTestId('loss-chart');
  const box = (await chart.locator('.u-over').boundingBox())!;
  const zoom: number[] = [];
  const reset: number[] = [];
  for (let k = 0; k < Math.min(RUNS, 20); k++) {
    const from = 0.1 + (0.6 * k) / 20;
    await page.mouse.move(box.x + box.width * from, box.y + box.height / 2);
    await page.mouse.down();
    await page.mouse.move(box.x + box.width * (from + 0.2), box.y + box.height / 2, { steps: 3 });
    await page.mouse.up();
    await nextFrame(page);
    const [z] = await chartWork(page, ['loss-chart']);
    zoom.push(z.refresh + z.draw);
    await chart.getByTestId('loss-chart-reset').click();
    await nextFrame(page);
    const [r] = await chartWork(page, ['loss-chart']);
    reset.push(r.refresh + r.draw);
  }
  return { zoom, reset };
}

/** The work of one pointer move over the loss chart: its handlers (all synced charts) and the layout they cause. */
function hoverWork(page: Page): Promise<number[]> {
  return page.evaluate(async () => {
    const over = document.querySelector('[data-testid="loss-chart"] .u-over')!;
    const box = over.getBoundingClientRect();
    const times: number[] = [];
    for (let i = 0; i <= 120; i++) {
      const f = i / 120;
      const t0 = performance.now();
      over.dispatchEvent(new MouseEvent('mousemove', { clientX: box.left + 2 + f * (box.width - 4), clientY: box.top + box.height * (0.3 + 0.4 * f), bubbles: true }));
      // Style and layout of the moved cursors and the new readout texts, as the next frame would do them.
      void (document.body as HTMLElement).offsetHeight;
      times.push(performance.now() - t0);
      await new Promise((resolve) => requestAnimationFrame(resolve));
    }
    return times;
  });
}

async function hoverFrames(page: Page): Promise<number[]> {
  const box = (await page.getByTestId('loss-chart').locator('.u-over').boundingBox())!;
  await page.evaluate(`(() => {
    window.__frames = [];
    window.__framesOn = true;
    let last = performance.now();
    const tick = (now) => { window.__frames.push(now - last); last = now; if (window.__framesOn) requestAnimationFrame(tick); };
    requestAnimationFrame((now) => { last = now; requestAnimationFrame(tick); });
  })()`);
  for (let pass = 0; pass < 3; pass++) {
    for (let i = 0; i <= 60; i++) {
      const f = pass % 2 ? 1 - i / 60 : i / 60;
      await page.mouse.move(box.x + 2 + f * (box.width - 4), box.y + box.height * (0.3 + 0.4 * f));
      await page.waitForTimeout(16);
    }
  }
  const frames = (await page.evaluate('(() => { window.__framesOn = false; return window.__frames; })()')) as number[];
  return frames.slice(1);
}

async function main(): Promise<void> {
  if (!args.includes('--no-build')) {
    console.log('building the studio (pass --no-build to skip)…');
    execFileSync(process.execPath, ['scripts/build.mjs'], { stdio: ['ignore', 'ignore', 'inherit'] });
  }
  const loadBefore = loadavg()[0];
  const studio = await startWebStudio();
  const browser = await launchChromium();
  try {
    const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
    await page.goto(studio.url);
    await page.waitForFunction(() => !!window.__shoalBench, null, { timeout: 60_000 });
    await showJob(page);
    const first = await chartWork(page, CHARTS);
    const smoothing = await smoothingRuns(page);
    const slider = await sliderFrames(page);
    const zooms = await zoomRuns(page);
    const hover = await hoverWork(page);
    const frames = await hoverFrames(page);
    await page.evaluate(() => window.__shoalBench!.clearJob());
    const live = await page.evaluate(([n, updates]) => window.__shoalBench!.chartUpdate(n, updates), [POINTS, Math.min(RUNS, 20)] as const);
    const liveFrames = await page.evaluate((n) => window.__shoalBench!.liveFrames(n, 120), POINTS);
    const dropped = frames.filter((f) => f > 1.5 * FRAME_MS).length;
    const liveDropped = liveFrames.filter((f) => f > 1.5 * FRAME_MS).length;
    const sliderDropped = slider.filter((f) => f > 1.5 * FRAME_MS).length;
    const rows: Row[] = [
      row('first draw, 3 charts', [first.reduce((s, c) => s + c.refresh + c.draw, 0)], `${first.map((c) => c.drawn).join(' / ')} points drawn of ${POINTS.toLocaleString('en-US')} each`),
      row('smoothing slider, 2 charts', smoothing.work, `EMA over ${POINTS.toLocaleString('en-US')} points + decimation + draw, per chart summed (median refresh ${quantile(smoothing.refresh, 0.5).toFixed(1)} + draw ${quantile(smoothing.draw, 0.5).toFixed(1)} ms); ${smoothing.drawn} points drawn`),
      { ...row('smoothing drag, a move every frame (rAF delta)', slider, `${sliderDropped} of ${slider.length} frames dropped (> 25 ms); 2 smoothed charts redrawn each frame`), verdict: quantile(slider, 0.95) <= 1.5 * FRAME_MS ? 'no dropped frames at p95' : 'frames dropped' },
      row('zoom to 20%, loss chart', zooms.zoom, 'the window decimated at full resolution, drawn'),
      row('reset zoom, loss chart', zooms.reset, 'all steps decimated again, drawn'),
      row('live update (+1 step)', live.updateMs, `store + React median ${quantile(live.changeMs, 0.5).toFixed(1)} ms, charts' frame median ${quantile(live.frameMs, 0.5).toFixed(1)} ms (chartUpdate)`),
      { ...row('live, a step every frame (rAF delta)', liveFrames, `${liveDropped} of ${liveFrames.length} frames dropped (> 25 ms)`), verdict: quantile(liveFrames, 0.95) <= 1.5 * FRAME_MS ? 'no dropped frames at p95' : 'frames dropped' },
      row('hover, per pointer move', hover, 'cursor and readout of 3 synced charts, with the layout it causes'),
      { ...row('hover sweep (rAF delta)', frames, `${dropped} of ${frames.length} frames dropped (> 25 ms); readouts of 3 synced charts`), verdict: quantile(frames, 0.95) <= 1.5 * FRAME_MS ? 'no dropped frames at p95' : 'frames dropped' },
    ];
    const columns: Column<Row>[] = [
      { key: 'measure', title: 'measure' },
      { key: 'min', title: 'min ms' },
      { key: 'median', title: 'median ms' },
      { key: 'p95', title: 'p95 ms' },
      { key: 'max', title: 'max ms' },
      { key: 'budget', title: 'budget ms' },
      { key: 'verdict', title: 'verdict' },
      { key: 'detail', title: 'detail' },
    ];
    const loadAfter = loadavg()[0];
    report('charts', `Charts at ${POINTS.toLocaleString('en-US')} steps against the 16.7 ms frame budget (60 Hz)`, rows, columns, [
      'Budget: one frame at 60 Hz (1000/60 ms), the physical limit of the display; a chart update that fits leaves the frame on time.',
      `Headless Chromium with software rendering (--disable-gpu); load average ${loadBefore.toFixed(1)} before and ${loadAfter.toFixed(1)} after on this machine: other work on the same cores inflates every figure.`,
      'min is the fastest run: with other processes on the same cores, the median and p95 include time the page waited for a core; min is the nearest to the work itself.',
      'Refresh and draw are what each chart measured for itself (data-refresh-ms, data-draw-ms); live update and hover work are timed in the page around the work; the hover sweep row is frame-to-frame time seen by requestAnimationFrame.',
    ], { points: POINTS, frameBudgetMs: FRAME_MS, loadAverage: { before: loadBefore, after: loadAfter }, smoothingWorkMs: smoothing.work, smoothingDragFrameMs: slider, zoomMs: zooms.zoom, resetMs: zooms.reset, liveUpdateMs: live.updateMs, liveChangeMs: live.changeMs, liveFrameMs: live.frameMs, liveFrameDeltaMs: liveFrames, hoverWorkMs: hover, hoverFrameMs: frames });
  } finally {
    await browser.close();
    await studio.stop();
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.stack : error);
  process.exit(1);
});
