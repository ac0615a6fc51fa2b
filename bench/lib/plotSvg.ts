/**
 * A small SVG line-chart writer for benchmark figures: no dependencies, plain text out, so a result
 * image can be written beside its JSON and viewed in any browser or converted with `convert`.
 */

export interface Series {
  name: string;
  points: Array<[number, number]>;
  color: string;
  /** Dashed line (e.g. a variant of another series). */
  dashed?: boolean;
}

export interface LinePanel {
  title: string;
  xLabel: string;
  yLabel: string;
  series: Series[];
  /** Axis ranges; default: the data's, widened to round ticks. */
  x?: [number, number];
  y?: [number, number];
  /** Horizontal reference lines, e.g. a target accuracy. */
  hLines?: Array<{ y: number; label: string }>;
  /** Format tick labels (default: up to 3 significant digits). */
  yFormat?: (v: number) => string;
}

/** Colours that stay distinct on white, for up to eight series. */
export const PALETTE = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2', '#17becf'];

const PANEL_W = 460;
const PANEL_H = 320;
const MARGIN = { left: 58, right: 16, top: 34, bottom: 46 };

const escape = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const num = (v: number) => (Math.round(v * 10) / 10).toString();

/** About `count` round tick values (1, 2 or 5 × 10^k apart) covering [lo, hi]. */
export function niceTicks(lo: number, hi: number, count = 5): number[] {
  if (!(hi > lo)) return [lo];
  const raw = (hi - lo) / count;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((k) => k * mag).find((s) => s >= raw) ?? 10 * mag;
  const ticks: number[] = [];
  // Tolerances: ticks computed by repeated addition drift by float rounding.
  for (let v = Math.ceil(lo / step - 1e-9) * step; v <= hi + step * 1e-9; v += step) ticks.push(Number(v.toPrecision(12)));
  return ticks;
}

function extent(values: number[], fallback: [number, number]): [number, number] {
  if (!values.length) return fallback;
  const lo = Math.min(...values);
  const hi = Math.max(...values);
  return hi > lo ? [lo, hi] : [lo - 1, hi + 1];
}

/** One chart as an SVG group, its top-left corner at (ox, oy). */
function panelSvg(panel: LinePanel, ox: number, oy: number): string {
  const xs = panel.series.flatMap((s) => s.points.map((p) => p[0]));
  const ys = panel.series.flatMap((s) => s.points.map((p) => p[1])).concat((panel.hLines ?? []).map((h) => h.y));
  const [x0, x1] = panel.x ?? extent(xs, [0, 1]);
  const [y0, y1] = panel.y ?? extent(ys, [0, 1]);
  const w = PANEL_W - MARGIN.left - MARGIN.right;
  const h = PANEL_H - MARGIN.top - MARGIN.bottom;
  const px = (v: number) => ox + MARGIN.left + ((v - x0) / (x1 - x0)) * w;
  const py = (v: number) => oy + MARGIN.top + h - ((v - y0) / (y1 - y0)) * h;
  const fmt = panel.yFormat ?? ((v: number) => String(Number(v.toPrecision(3))));
  const out: string[] = [];
  out.push(`<text x="${num(ox + PANEL_W / 2)}" y="${num(oy + 20)}" text-anchor="middle" font-size="14" font-weight="bold">${escape(panel.title)}</text>`);
  // Grid and ticks first, so the data draws over them.
  for (const t of niceTicks(x0, x1)) {
    out.push(`<line x1="${num(px(t))}" y1="${num(py(y0))}" x2="${num(px(t))}" y2="${num(py(y1))}" stroke="#e5e5e5"/>`);
    out.push(`<text x="${num(px(t))}" y="${num(py(y0) + 16)}" text-anchor="middle" font-size="11">${escape(String(Number(t.toPrecision(3))))}</text>`);
  }
  for (const t of niceTicks(y0, y1)) {
    out.push(`<line x1="${num(px(x0))}" y1="${num(py(t))}" x2="${num(px(x1))}" y2="${num(py(t))}" stroke="#e5e5e5"/>`);
    out.push(`<text x="${num(px(x0) - 6)}" y="${num(py(t) + 4)}" text-anchor="end" font-size="11">${escape(fmt(t))}</text>`);
  }
  out.push(`<rect x="${num(px(x0))}" y="${num(py(y1))}" width="${num(w)}" height="${num(h)}" fill="none" stroke="#444"/>`);
  out.push(`<text x="${num(px((x0 + x1) / 2))}" y="${num(oy + PANEL_H - 8)}" text-anchor="middle" font-size="12">${escape(panel.xLabel)}</text>`);
  const ly = oy + MARGIN.top + h / 2;
  out.push(`<text x="${num(ox + 14)}" y="${num(ly)}" text-anchor="middle" font-size="12" transform="rotate(-90 ${num(ox + 14)} ${num(ly)})">${escape(panel.yLabel)}</text>`);
  for (const line of panel.hLines ?? []) {
    out.push(`<line x1="${num(px(x0))}" y1="${num(py(line.y))}" x2="${num(px(x1))}" y2="${num(py(line.y))}" stroke="#888" stroke-dasharray="2 3"/>`);
    // Label at the left end: curves usually start low and finish on the right.
    out.push(`<text x="${num(px(x0) + 4)}" y="${num(py(line.y) - 4)}" font-size="10" fill="#666">${escape(line.label)}</text>`);
  }
  // Clip the data to the plot area: a point outside the chosen range must not spill over the axes.
  const clip = `clip${Math.round(ox)}_${Math.round(oy)}`;
  out.push(`<clipPath id="${clip}"><rect x="${num(px(x0))}" y="${num(py(y1))}" width="${num(w)}" height="${num(h)}"/></clipPath>`);
  out.push(`<g clip-path="url(#${clip})">`);
  for (const s of panel.series) {
    const d = s.points.map(([x, y]) => `${num(px(x))},${num(py(y))}`).join(' ');
    out.push(`<polyline points="${d}" fill="none" stroke="${s.color}" stroke-width="2"${s.dashed ? ' stroke-dasharray="6 4"' : ''}/>`);
    for (const [x, y] of s.points) out.push(`<circle cx="${num(px(x))}" cy="${num(py(y))}" r="3" fill="${s.color}"/>`);
  }
  out.push('</g>');
  return out.join('\n');
}

/**
 * A figure: panels side by side, one shared legend underneath (every panel plots the same series),
 * and an optional caption line. Returns the SVG document text.
 */
export function lineChartsSvg(panels: LinePanel[], caption?: string): string {
  const legend = panels[0]?.series ?? [];
  const perRow = 3;
  const legendRows = Math.ceil(legend.length / perRow);
  const width = PANEL_W * panels.length;
  const height = PANEL_H + 12 + legendRows * 20 + (caption ? 22 : 0) + 8;
  const parts = panels.map((p, i) => panelSvg(p, i * PANEL_W, 0));
  const colW = width / perRow;
  legend.forEach((s, i) => {
    const x = (i % perRow) * colW + 40;
    const y = PANEL_H + 16 + Math.floor(i / perRow) * 20;
    parts.push(`<line x1="${x}" y1="${y}" x2="${x + 26}" y2="${y}" stroke="${s.color}" stroke-width="2.5"${s.dashed ? ' stroke-dasharray="6 4"' : ''}/>`);
    parts.push(`<text x="${x + 32}" y="${y + 4}" font-size="12">${escape(s.name)}</text>`);
  });
  if (caption) parts.push(`<text x="${width / 2}" y="${height - 12}" text-anchor="middle" font-size="11" fill="#555">${escape(caption)}</text>`);
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="DejaVu Sans, Arial, sans-serif">`,
    `<rect width="${width}" height="${height}" fill="white"/>`,
    ...parts,
    '</svg>',
    '',
  ].join('\n');
}
