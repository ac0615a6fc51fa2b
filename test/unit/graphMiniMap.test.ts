import { describe, expect, it } from 'vitest';
import { miniMapGeometry } from '../../renderer/src/graph/miniMapGeometry';

/** The minimap's size and what it shows: small on a small canvas, the graph's shape, a deep graph a stretch at a time. */
describe('minimap geometry', () => {
  const OFFSET = 5;
  const small = { width: 990, height: 380 }; // the graph canvas of a 1024×700 window
  const large = { width: 1880, height: 800 };

  it('fits a graph of ordinary shape whole, in its shape, and covers little of a small canvas', () => {
    const bounds = { x: 0, y: 0, width: 600, height: 900 };
    const view = { x: 0, y: 0, width: 990, height: 380 };
    const g = miniMapGeometry(bounds, view, small, OFFSET);
    expect(g.width * g.height).toBeLessThan(0.1 * small.width * small.height);
    // Its shape is the graph's: no empty band beside it.
    expect((g.width - 2 * OFFSET) / (g.height - 2 * OFFSET)).toBeCloseTo(600 / 900, 5);
    // The whole graph shown, within the margin.
    expect(g.box).toEqual({ x: -g.margin, y: -g.margin, width: 600 + 2 * g.margin, height: 900 + 2 * g.margin });
    // A larger canvas, a larger map; never beyond the limits.
    const big = miniMapGeometry(bounds, view, large, OFFSET);
    expect(big.height).toBeGreaterThan(g.height);
    expect(big.width).toBeLessThanOrEqual(220 + 2 * OFFSET);
    expect(big.height).toBeLessThanOrEqual(200 + 2 * OFFSET);
  });

  it('draws a deep graph wide enough to see and scrolls along it with the view, staying inside the graph', () => {
    const bounds = { x: 0, y: 0, width: 460, height: 112_000 }; // 1,000 layers in a column
    const at = (y: number) => miniMapGeometry(bounds, { x: 0, y, width: 800, height: 600 }, small, OFFSET);
    const top = at(0);
    expect(top.width - 2 * OFFSET).toBeGreaterThanOrEqual(64);
    expect(top.box.y).toBeCloseTo(-top.margin, 5);
    // Middle: the stretch is centred on the view.
    const middle = at(50_000);
    expect(middle.box.y + middle.box.height / 2).toBeCloseTo(50_300, 5);
    // Bottom: it stops at the graph's end; its size never changes with the view.
    const bottom = at(111_800);
    expect(bottom.box.y + bottom.box.height - bottom.margin).toBeCloseTo(112_000, 5);
    expect([middle.width, middle.height, bottom.width, bottom.height]).toEqual([top.width, top.height, top.width, top.height]);
  });

  it('shows the view when nothing is drawn, and a default box before the canvas is measured', () => {
    const view = { x: 10, y: 20, width: 400, height: 300 };
    const g = miniMapGeometry({ x: 0, y: 0, width: 0, height: 0 }, view, small, OFFSET);
    expect(g.box.x + g.margin).toBeCloseTo(10, 5);
    expect(g.box.width - 2 * g.margin).toBeCloseTo(400, 5);
    const unmeasured = miniMapGeometry({ x: 0, y: 0, width: 0, height: 0 }, { x: 0, y: 0, width: 0, height: 0 }, { width: 0, height: 0 }, OFFSET);
    expect(Number.isFinite(unmeasured.scale) && unmeasured.scale > 0).toBe(true);
  });
});
