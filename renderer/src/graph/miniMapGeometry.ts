/** Where the minimap sits and what part of the graph it shows (pure: GraphMiniMap draws it). */
export interface Rect {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** Share of the canvas the minimap may take on each side, and its limits in pixels. */
const SHARE = { width: 0.2, height: 0.28 };
const LIMIT = { width: [72, 220], height: [56, 200] } as const;
/**
 * No side of the picture narrower than this (px). A deep graph (1,000 layers in a column is 250 times
 * taller than wide) fitted whole into the box would be a hairline: it is drawn at this width instead,
 * and the minimap shows the stretch of it around the view, scrolling along as the view moves.
 */
const MIN_SIDE = 64;

const clamp = (v: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, v));

export interface MiniMapGeometry {
  /** The minimap's size on screen (px), the picture's margin included. */
  width: number;
  height: number;
  /** What it shows, in flow coordinates (its SVG viewBox). */
  box: Rect;
  /** Flow units per minimap pixel. */
  scale: number;
  /** Margin around the picture, in flow units. */
  margin: number;
}

/**
 * The minimap of a graph whose nodes span `bounds`, for a canvas of `pane` pixels showing `view` (flow
 * coordinates). Its size follows the canvas (a small window gets a small map that covers little of the
 * graph) and the graph's shape (no empty bands beside a tall graph); it changes with the graph and the
 * canvas, never with a pan or zoom. `offset` is the margin around the picture in pixels.
 */
export function miniMapGeometry(bounds: Rect, view: Rect, pane: { width: number; height: number }, offset: number): MiniMapGeometry {
  const max = { width: clamp(pane.width * SHARE.width, ...LIMIT.width), height: clamp(pane.height * SHARE.height, ...LIMIT.height) };
  // Nothing drawn yet (or a canvas not measured yet): the view stands in for the graph.
  const b = bounds.width > 0 && bounds.height > 0 ? bounds : view.width > 0 && view.height > 0 ? view : { x: 0, y: 0, width: max.width, height: max.height };
  const fit = Math.max(b.width / max.width, b.height / max.height);
  const scale = Math.min(fit, b.width / MIN_SIDE, b.height / MIN_SIDE);
  const [width, height] = [Math.min(b.width / scale, max.width), Math.min(b.height / scale, max.height)];
  const [spanX, spanY] = [width * scale, height * scale];
  // The stretch shown: the whole graph where it fits, else centred on the view's centre, within the graph.
  const x = clamp(view.x + view.width / 2 - spanX / 2, b.x, b.x + b.width - spanX);
  const y = clamp(view.y + view.height / 2 - spanY / 2, b.y, b.y + b.height - spanY);
  const margin = offset * scale;
  return { width: width + 2 * offset, height: height + 2 * offset, box: { x: x - margin, y: y - margin, width: spanX + 2 * margin, height: spanY + 2 * margin }, scale, margin };
}
