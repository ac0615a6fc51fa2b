/**
 * UI benchmark: is the studio fast enough with a big model and a long run?
 *
 *   npm run bench -- ui [--layers 1000] [--points 100000] [--runs 3] [--no-build]
 *
 * Drives the browser shell (`node dist/launch.cjs --web`, built first unless --no-build) in Debian's
 * Chromium (SHOAL_CHROMIUM or /usr/bin/chromium, headless, software rendering) through Playwright:
 * 1. Layout: opens a synthetic Keras model.json of 1,000 layers (bench/lib/syntheticKeras.ts) through
 *    the model file input, as a user would, `--runs` times. The layout time is the studio's own
 *    measurement (data-layout-ms on the graph: elk in its Web Worker, round trip included, for every
 *    layer drawn: the model has no groups, so nothing folds); "open to drawn" is from setting the file to
 *    the first layer node on screen, as seen from the test driver.
 * 2. Frames: with that graph on screen, pans (mouse drags on the empty canvas) and zooms (wheel) for a
 *    few seconds while the page records requestAnimationFrame deltas; p95, median and dropped frames;
 *    then, zoomed out as far as the canvas allows (the most layers on screen), pans alone.
 * 3. Chart: window.__shoalBench.chartUpdate (renderer/src/bench/benchHook.ts; browser shell only) shows
 *    a job with 100,000 steps in the Monitor's charts, then appends one step 20 times; each update is
 *    timed from the store change to uPlot having drawn.
 * 4. References, side by side with the studio's figures: the layout module (renderer/src/graph/
 *    layeredLayout.ts) on the same 1,000-layer graph with elk.bundled in this Node process (no worker,
 *    no React, no DOM: the floor of the algorithm on this CPU), and the same pans and zooms on a bare
 *    page holding 1,000 plain boxes of a layer's size in one CSS-transformed layer (what the browser
 *    alone costs to move that many boxes: the floor for the frame times).
 * Prints measured against target and reference, and writes bench/results/ui.json with { layoutMs1000,
 * p95FrameMs, chartUpdateMs, referenceLayoutMs1000, referenceP95FrameMs } and the rows.
 */
import { execFileSync } from 'node:child_process';
import { loadavg } from 'node:os';
import type { Page } from '@playwright/test';
import ELK from 'elkjs/lib/elk.bundled.js';
import { elkGraph, fromElk, NODE_HEIGHT, NODE_WIDTH } from '../renderer/src/graph/layeredLayout.js';
import { syntheticKerasModel } from './lib/syntheticKeras.js';
import { launchChromium, startWebStudio } from './lib/webStudio.js';
import { report, type Column } from './lib/report.js';
import { args, numberFlag as flag } from './lib/args.js';
// The type of window.__shoalBench (a global augmentation; nothing is imported at run time).
import type {} from '../renderer/src/bench/benchHook.js';

const LAYERS = flag('layers', 1000);
const POINTS = flag('points', 100_000);
const RUNS = flag('runs', 3);
const CHART_UPDATES = 20;
const LAYOUT_TARGET_MS = 2000;
/** Budget for work that must fit in one 60 Hz frame (a chart update). */
const FRAME_TARGET_MS = 1000 / 60;
/**
 * requestAnimationFrame deltas come in whole vsync intervals with ±0.1 ms of timer jitter (16.6–16.8
 * ms at 60 Hz; 33.3 when a frame was dropped), so a delta counts as dropped above 1.5 intervals. The
 * pan/zoom target: p95 below that — at least 95% of frames drawn on time.
 */
const DROPPED_FRAME_MS = 1.5 * FRAME_TARGET_MS;
const droppedShare = (f: number[]) => f.filter((x) => x > DROPPED_FRAME_MS).length / Math.max(f.length, 1);

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? (s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2) : NaN;
};
const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)] : NaN;
};

interface Open {
  /** The default view: the big ungrouped model folded into blocks of consecutive layers. */
  foldedMs: number;
  foldedNodes: number;
  /** "Show every layer": all LAYERS drawn. */
  layoutMs: number;
  drawnMs: number;
  nodes: number;
}

const layoutOf = (page: Page) =>
  page.evaluate(() => {
    const el = document.querySelector('section[data-testid="graph"]');
    return { ms: Number(el?.getAttribute('data-layout-ms')), nodes: Number(el?.getAttribute('data-layout-nodes')) };
  });

/** Open the model through the file input (it opens folded), then show every layer; the studio's layout times. */
async function openModel(page: Page, run: number): Promise<Open> {
  const name = `synthetic-${LAYERS}-run${run}.json`;
  const graph = page.locator('section[data-testid="graph"]');
  await page.getByTestId('model-file-input').setInputFiles({ name, mimeType: 'application/json', buffer: Buffer.from(syntheticKerasModel(LAYERS)) });
  await page.getByTestId('imported-model').waitFor();
  await graph.locator('[data-testid="graph-block"]').first().waitFor({ timeout: 120_000 });
  const folded = await layoutOf(page);
  const t0 = Date.now();
  await page.getByTestId('graph-fold').click();
  await page.waitForFunction(
    ([layers]) => {
      const el = document.querySelector('section[data-testid="graph"]');
      return Number(el?.getAttribute('data-layout-nodes')) === layers && !!el?.querySelector('[data-layer="logits"], [data-layer="dense_1"]');
    },
    [LAYERS],
    { timeout: 120_000 },
  );
  const drawnMs = Date.now() - t0;
  const full = await layoutOf(page);
  const nodes = await graph.locator('[data-testid="graph-node"]').count();
  return { foldedMs: folded.ms, foldedNodes: folded.nodes, layoutMs: full.ms, drawnMs, nodes };
}

/** A point on the empty canvas (no layer under it), for panning by dragging. */
async function emptyCanvasPoint(page: Page, canvas = '.graph .react-flow'): Promise<{ x: number; y: number }> {
  const point = await page.evaluate((selector) => {
    const pane = document.querySelector(selector)!.getBoundingClientRect();
    for (let fy = 0.15; fy < 0.95; fy += 0.05) {
      for (let fx = 0.05; fx < 0.7; fx += 0.03) {
        const x = pane.left + fx * pane.width;
        const y = pane.top + fy * pane.height;
        const el = document.elementFromPoint(x, y);
        if (el && el.closest(selector) && !el.closest('.layer-node, .react-flow__minimap, .react-flow__controls, .graph__search, .graph__search-open, button')) return { x, y };
      }
    }
    return undefined;
  }, canvas);
  if (!point) throw new Error('No empty spot on the graph canvas to drag from.');
  return point;
}

/** Pan and zoom (or with `zoom` false only pan) for a few seconds while the page records frame-to-frame times. */
async function measureFrames(page: Page, canvas?: string, zoom = true): Promise<number[]> {
  // A string, not a function: tsx would wrap named inner functions in a helper the page lacks.
  await page.evaluate(`(() => {
    window.__frames = [];
    window.__framesOn = true;
    let last = performance.now();
    const tick = (now) => {
      window.__frames.push(now - last);
      last = now;
      if (window.__framesOn) requestAnimationFrame(tick);
    };
    requestAnimationFrame((now) => {
      last = now;
      requestAnimationFrame(tick);
    });
  })()`);
  const start = await emptyCanvasPoint(page, canvas);
  const drag = async (dx: number, dy: number, steps: number) => {
    const from = await emptyCanvasPoint(page, canvas).catch(() => start);
    await page.mouse.move(from.x, from.y);
    await page.mouse.down();
    for (let i = 1; i <= steps; i++) await page.mouse.move(from.x + (dx * i) / steps, from.y + (dy * i) / steps);
    await page.mouse.up();
  };
  const wheel = async (delta: number, times: number) => {
    await page.mouse.move(start.x, start.y);
    for (let i = 0; i < times; i++) {
      await page.mouse.wheel(0, delta);
      await page.waitForTimeout(16);
    }
  };
  await drag(300, 120, 40);
  if (zoom) await wheel(-120, 12); // zoom in
  await drag(-400, -200, 50);
  await drag(250, 300, 40);
  if (zoom) await wheel(120, 12); // zoom out
  await drag(-150, -220, 40);
  const frames = await page.evaluate(() => {
    const w = window as unknown as { __frames: number[]; __framesOn: boolean };
    w.__framesOn = false;
    return w.__frames;
  });
  // The first delta spans the recorder's start.
  return frames.slice(1);
}

/** Layer nodes whose box is on the graph canvas now. */
const layersOnScreen = (page: Page) =>
  page.evaluate(() => {
    const pane = document.querySelector('.graph .react-flow')!.getBoundingClientRect();
    return [...document.querySelectorAll('.graph [data-testid="graph-node"]')].filter((el) => {
      const r = el.getBoundingClientRect();
      return r.bottom > pane.top && r.top < pane.bottom && r.right > pane.left && r.left < pane.right;
    }).length;
  });

/**
 * Elk itself on the studio's graph for a 1,000-layer chain in two stages (as the default plan cuts it),
 * elk.bundled in this process, then the module's stacking: what a graph elk must lay out costs (the
 * studio draws a chain without elk, layeredLayout's chainElk, so its own figure is lower).
 */
async function referenceLayout(layers: number, runs: number): Promise<number[]> {
  const elk = new ELK();
  const chain = Array.from({ length: layers }, (_, i) => ({ id: `l${i}`, inputs: i ? [`l${i - 1}`] : [] }));
  const stageOf = new Map(chain.map((l, i) => [l.id, i < layers / 2 ? 0 : 1]));
  const times: number[] = [];
  for (let run = 0; run < runs; run++) {
    const t0 = performance.now();
    fromElk({ layers: chain, stageOf }, await elk.layout(elkGraph({ layers: chain, stageOf })));
    times.push(performance.now() - t0);
  }
  return times;
}

/**
 * A bare page with `count` boxes of a layer node's size and text, stacked as the graph stacks them, in
 * one container that drags and wheels move by a CSS transform (as xyflow's viewport does): the frames
 * the browser alone needs for the same pans and zooms.
 */
async function referenceFrames(page: Page, count: number): Promise<number[]> {
  await page.setContent(`<!doctype html><html><body style="margin:0;overflow:hidden;font:13px sans-serif">
    <div id="pane" style="position:absolute;inset:0;overflow:hidden;background:#f4f6f8"><div id="view" style="position:absolute;left:0;top:0;transform-origin:0 0"></div></div></body></html>`);
  // A string, not a function: tsx would wrap the inner functions in a helper the page lacks.
  await page.evaluate(`(() => {
    const [n, w, h] = [${count}, ${NODE_WIDTH}, ${NODE_HEIGHT}];
    const view = document.getElementById('view');
    const html = [];
    for (let i = 0; i < n; i++) html.push('<div style="position:absolute;left:300px;top:' + i * (h + 36) + 'px;width:' + w + 'px;height:' + h + 'px;box-sizing:border-box;border:1px solid #ccd;border-left:4px solid #4cc9f0;border-radius:6px;background:#fff;padding:8px 10px"><b>dense_' + i + '</b><div>dense 64 units · linear</div><div>→ 64 · 4,160 params</div></div>');
    view.innerHTML = html.join('');
    const state = { x: 0, y: 0, zoom: 0.5, drag: undefined };
    const apply = () => (view.style.transform = 'translate(' + state.x + 'px,' + state.y + 'px) scale(' + state.zoom + ')');
    apply();
    const pane = document.getElementById('pane');
    pane.addEventListener('pointerdown', (e) => (state.drag = { x: e.clientX, y: e.clientY }));
    pane.addEventListener('pointerup', () => (state.drag = undefined));
    pane.addEventListener('pointermove', (e) => {
      if (!state.drag) return;
      state.x += e.clientX - state.drag.x;
      state.y += e.clientY - state.drag.y;
      state.drag = { x: e.clientX, y: e.clientY };
      apply();
    });
    pane.addEventListener('wheel', (e) => {
      state.zoom *= Math.pow(2, -e.deltaY * 0.002);
      apply();
    });
  })()`);
  await page.waitForTimeout(500);
  return measureFrames(page, '#pane');
}

interface Row {
  measure: string;
  measured: number;
  /** The same work without the studio (see the notes), measured on this machine. */
  reference?: number;
  target?: number;
  verdict: string;
  detail: string;
}

async function main(): Promise<void> {
  if (!args.includes('--no-build')) {
    console.log('building the studio (pass --no-build to skip)…');
    execFileSync(process.execPath, ['scripts/build.mjs'], { stdio: ['ignore', 'ignore', 'inherit'] });
  }
  // The machine is shared: frame times depend on what else runs, so the load averages go with them.
  const loadStart = loadavg();
  const studio = await startWebStudio();
  const browser = await launchChromium();
  try {
    const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
    await page.goto(studio.url);
    await page.getByTestId('status').filter({ hasText: 'Ready' }).waitFor({ timeout: 60_000 });
    const version = await browser.version();

    const opens: Open[] = [];
    for (let run = 0; run < RUNS; run++) {
      const open = await openModel(page, run);
      opens.push(open);
      console.log(`  open ${run + 1}/${RUNS}: folded ${open.foldedNodes} blocks laid out in ${open.foldedMs} ms; every layer: layout ${open.layoutMs} ms, drawn after ${open.drawnMs} ms (${open.nodes} layer nodes in the DOM)`);
    }
    await page.waitForTimeout(500);
    const framesAll = await measureFrames(page);
    console.log(`  frames, every layer drawn: ${framesAll.length} while panning and zooming`);
    // Zoomed out as far as the canvas allows: the most layers on screen at once, each a plain box.
    const zoomOut = page.locator('section[data-testid="graph"] .react-flow__controls-zoomout');
    // The button is disabled at the canvas's least zoom.
    for (let i = 0; i < 60 && (await zoomOut.isEnabled()); i++) await zoomOut.click();
    await page.waitForTimeout(500);
    const onScreenFar = await layersOnScreen(page);
    const framesFar = await measureFrames(page, undefined, false);
    console.log(`  frames, zoomed out (${onScreenFar} layers on screen): ${framesFar.length} while panning`);
    await page.getByTestId('graph-fold').click();
    await page.locator('section[data-testid="graph"]').locator('[data-testid="graph-block"]').first().waitFor();
    await page.waitForTimeout(500);
    const frames = await measureFrames(page);
    console.log(`  frames, folded (the default view): ${frames.length} while panning and zooming`);

    const referenceRuns = await referenceLayout(LAYERS, RUNS);
    console.log(`  reference layout (layeredLayout + elk.bundled in Node): ${referenceRuns.map((m) => m.toFixed(0)).join(', ')} ms`);
    const referencePage = await browser.newPage({ viewport: { width: 1440, height: 900 } });
    const framesReference = await referenceFrames(referencePage, LAYERS);
    await referencePage.close();
    console.log(`  reference frames, ${LAYERS} bare boxes: ${framesReference.length} while panning and zooming`);

    const chart = await page.evaluate(([points, updates]) => window.__shoalBench!.chartUpdate(points, updates), [POINTS, CHART_UPDATES] as const);
    console.log(`  chart: first draw ${chart.firstMs.toFixed(1)} ms, updates ${chart.updateMs.map((m) => m.toFixed(1)).join(' ')} (chart data-points ${chart.drawnPoints})`);

    const layoutMs1000 = median(opens.map((o) => o.layoutMs));
    const p95FrameMs = quantile(frames, 0.95);
    const p95FrameMsAllLayers = quantile(framesAll, 0.95);
    const p95FrameMsFarPan = quantile(framesFar, 0.95);
    const chartUpdateMs = median(chart.updateMs);
    const referenceLayoutMs1000 = median(referenceRuns);
    const referenceP95FrameMs = quantile(framesReference, 0.95);
    // Frame deltas come in vsync steps (16.67 ms): compare at the 0.1 ms the table prints.
    const verdict = (v: number, limit: number) => (Math.round(v * 10) <= Math.round(limit * 10) ? 'ok' : 'over');
    const frameDetail = (f: number[]) => `${f.length} frames, ${(100 * droppedShare(f)).toFixed(1)}% dropped, median ${median(f).toFixed(1)} ms, max ${Math.max(...f).toFixed(1)} ms`;
    const rows: Row[] = [
      { measure: `layout, ${LAYERS} layers drawn (median of ${RUNS})`, measured: layoutMs1000, reference: referenceLayoutMs1000, target: LAYOUT_TARGET_MS, verdict: verdict(layoutMs1000, LAYOUT_TARGET_MS), detail: `elk in a Web Worker; runs ${opens.map((o) => o.layoutMs).join(', ')} ms` },
      { measure: `layout, default view (${opens[0].foldedNodes} blocks)`, measured: median(opens.map((o) => o.foldedMs)), target: LAYOUT_TARGET_MS, verdict: verdict(median(opens.map((o) => o.foldedMs)), LAYOUT_TARGET_MS), detail: `the model opens folded; runs ${opens.map((o) => o.foldedMs).join(', ')} ms` },
      { measure: `"show every layer" to drawn`, measured: median(opens.map((o) => o.drawnMs)), verdict: '', detail: 'click → last layer node on screen, from the driver' },
      { measure: 'frame time pan/zoom, default view, p95', measured: p95FrameMs, target: DROPPED_FRAME_MS, verdict: p95FrameMs < DROPPED_FRAME_MS ? 'ok' : 'over', detail: frameDetail(frames) },
      { measure: `frame time pan/zoom, ${LAYERS} layers, p95`, measured: p95FrameMsAllLayers, reference: referenceP95FrameMs, target: DROPPED_FRAME_MS, verdict: p95FrameMsAllLayers < DROPPED_FRAME_MS ? 'ok' : 'over', detail: frameDetail(framesAll) },
      { measure: `frame time pan, zoomed out, p95`, measured: p95FrameMsFarPan, target: DROPPED_FRAME_MS, verdict: p95FrameMsFarPan < DROPPED_FRAME_MS ? 'ok' : 'over', detail: `${onScreenFar} of ${LAYERS} layers on screen; ${frameDetail(framesFar)}` },
      { measure: `chart update, ${POINTS.toLocaleString('en')} points (median)`, measured: chartUpdateMs, target: FRAME_TARGET_MS, verdict: verdict(chartUpdateMs, FRAME_TARGET_MS), detail: `${CHART_UPDATES} appends, p95 ${quantile(chart.updateMs, 0.95).toFixed(1)} ms` },
      { measure: `chart first draw, ${POINTS.toLocaleString('en')} points`, measured: chart.firstMs, verdict: '', detail: `chart's data-points ${chart.drawnPoints}` },
    ];
    const columns: Column<Row>[] = [
      { key: 'measure', title: 'measure' },
      { key: 'measured', title: 'measured ms', format: (v) => (v as number).toFixed(1) },
      { key: 'reference', title: 'reference ms', format: (v) => (v === undefined ? '—' : (v as number).toFixed(1)) },
      { key: 'target', title: 'target ms', format: (v) => (v === undefined ? '—' : `≤ ${(v as number).toFixed(1)}`) },
      { key: 'verdict', title: '' },
      { key: 'detail', title: 'detail' },
    ];
    report('ui', `UI benchmark: ${LAYERS}-layer graph and ${POINTS.toLocaleString('en')}-point charts in Chromium ${version} (browser shell)`, rows, columns, [
      `Load average (1, 5, 15 min) at the start ${loadStart.map((l) => l.toFixed(1)).join(', ')}, at the end ${loadavg().map((l) => l.toFixed(1)).join(', ')}: frame times on a busy machine are worse than on an idle one.`,
      'Headless Chromium with --disable-gpu: frames are rasterised in software on the CPU, so frame times are an upper bound for a desktop with a GPU.',
      'Layout time is measured by the studio around elk\'s layout call in its Web Worker (data-layout-ms on the graph). layoutMs1000 is with every layer drawn ("Show every layer"); an ungrouped model of more than 200 layers opens folded into blocks of 20 consecutive layers, the default view.',
      'p95FrameMs is the default (folded) view; p95FrameMsAllLayers with all layers drawn; p95FrameMsFarPan pans (no zoom) with all layers drawn, zoomed out as far as the canvas allows, the most layers on screen at once (layersOnScreenFar). Pans are mouse drags on the empty canvas, zooms wheel steps; frame times are requestAnimationFrame deltas, which come in whole 60 Hz intervals (16.6–16.8 ms with timer jitter; 33.3 ms when a frame is dropped): a delta above 1.5 intervals (25 ms) is a dropped frame, and the target is p95 below it, i.e. at least 95% of frames on time.',
      'Chart updates: a job with the given number of steps shown in the Monitor, one step appended per update; timed from the store change through React\'s commit to uPlot\'s draw.',
      `References: layout — elk's layered algorithm (elk.bundled in this Node process: no Web Worker, React or DOM) on the elk graph renderer/src/graph/layeredLayout.ts builds for a ${LAYERS}-layer chain cut in two stages, plus its stacking (runs ${referenceRuns.map((m) => m.toFixed(0)).join(', ')} ms; the first includes compiling elk). The studio lays out a chain (every band a single column) without elk, to the same coordinates (test/unit/graphLayout.test.ts), so its figure is below elk's: graphs with branches go to elk in the worker; frames — the same drags and wheel steps on a bare page of ${LAYERS} plain boxes of a layer node's size in one CSS-transformed container (${frameDetail(framesReference)}).`,
    ], { layoutMs1000, referenceLayoutMs1000, referenceP95FrameMs, referenceLayoutRunsMs: referenceRuns, p95FrameMs, chartUpdateMs, p95FrameMsAllLayers, p95FrameMsFarPan, layersOnScreenFar: onScreenFar, droppedFrameShareFarPan: droppedShare(framesFar), loadAverage: { start: loadStart, end: loadavg() }, layoutMsDefaultView: median(opens.map((o) => o.foldedMs)), chartFirstDrawMs: chart.firstMs, medianFrameMs: median(frames), droppedFrameShare: droppedShare(frames), droppedFrameShareAllLayers: droppedShare(framesAll), layoutRunsMs: opens.map((o) => o.layoutMs), chromium: version, layers: LAYERS, points: POINTS });
  } finally {
    await browser.close();
    await studio.stop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
