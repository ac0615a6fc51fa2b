import type uPlot from 'uplot';

/**
 * What a chart marks at a step: a resize (a new generation that grew or shrank the job), a lost agent,
 * a restart (a coordinator that resumed from a checkpoint), and the evaluations.
 */
export type MarkerKind = 'resize' | 'lost' | 'restart' | 'eval';

export interface ChartMarker {
  step: number;
  label: string;
  kind?: MarkerKind;
}

/** Kinds from the generation's reason as the coordinator words it (agents/coordinator: recovery, resizes, trainingLoop). */
export function markerKind(marker: ChartMarker): MarkerKind {
  if (marker.kind) return marker.kind;
  const reason = marker.label.replace(/^generation \d+: /, '');
  if (reason.startsWith('lost')) return 'lost';
  if (/resumed|restart/.test(reason)) return 'restart';
  return 'resize';
}

/** A job's markers: its generations (from the store) and one per evaluation step. */
export function jobMarkers(metrics: { markers: ChartMarker[]; evalSteps: number[] }): ChartMarker[] {
  return [...metrics.markers, ...metrics.evalSteps.map((step) => ({ step, label: `evaluation at step ${step}`, kind: 'eval' as const }))];
}

export const MARKER_COLORS: Record<MarkerKind, string> = { resize: '#ffd166', lost: '#ef476f', restart: '#b388eb', eval: '#80ed99' };
const SHORT: Record<MarkerKind, string> = { resize: 'resize', lost: 'lost', restart: 'restart', eval: 'eval' };

/**
 * Each generation marker as a dashed vertical line over the plot with its kind at the top; each
 * evaluation as a small triangle on the x axis (there may be hundreds: no lines, no labels).
 */
export function drawMarkers(u: uPlot, markers: ChartMarker[]): void {
  const { ctx } = u;
  const { left, top, width, height } = u.bbox;
  const px = devicePixelRatio;
  ctx.save();
  ctx.lineWidth = Math.max(1, px);
  ctx.font = `${10 * px}px sans-serif`;
  for (const marker of markers) {
    const x = Math.round(u.valToPos(marker.step, 'x', true));
    if (!(x >= left && x <= left + width)) continue;
    const kind = markerKind(marker);
    ctx.strokeStyle = ctx.fillStyle = MARKER_COLORS[kind];
    if (kind === 'eval') {
      const y = top + height;
      ctx.beginPath();
      ctx.moveTo(x, y - 6 * px);
      ctx.lineTo(x - 4 * px, y);
      ctx.lineTo(x + 4 * px, y);
      ctx.closePath();
      ctx.fill();
      continue;
    }
    ctx.setLineDash([4 * px, 3 * px]);
    ctx.beginPath();
    ctx.moveTo(x, top);
    ctx.lineTo(x, top + height);
    ctx.stroke();
    ctx.setLineDash([]);
    ctx.fillText(SHORT[kind], x + 3 * px, top + 10 * px);
  }
  ctx.restore();
}

/** The markers within `px` CSS pixels of the cursor (for the hover readout). */
export function markersNear(u: uPlot, markers: ChartMarker[], left: number, px = 4): ChartMarker[] {
  return markers.filter((m) => Math.abs(u.valToPos(m.step, 'x') - left) <= px);
}
