import type { ElkExtendedEdge, ElkNode } from 'elkjs/lib/elk-api';

/**
 * The graph's layout, Netron-style: one top-down layered drawing (elk's layered algorithm, orthogonal
 * edges). Every layer has one input port at the middle of its top and one output port at the middle of
 * its bottom, so the main path runs straight down and a skip connection (a residual) is routed beside
 * it instead of pulling the path sideways. Each pipeline stage is a horizontal band (a swimlane framed
 * by its stage box): the bands are laid out separately, then stacked in pipeline order with a gap, so
 * two stage frames never overlap. Edges between bands are drawn here: straight down through the gap
 * when they leave a band's bottom row for the next band's top row, else in a lane right of the bands.
 *
 * Pure: elk itself is passed in (a Web Worker in the studio, elk.bundled in the unit test).
 */
export const NODE_WIDTH = 232;
export const NODE_HEIGHT = 76;
/** Room above a stage's first layer for its badge, prediction and first diagnostic. */
export const STAGE_TOP = 96;
/** Vertical gap between two stage frames. */
export const STAGE_GAP = 48;
/** A stage frame is at least this wide: its label line needs the room. */
export const MIN_STAGE_WIDTH = 460;
/** Horizontal distance between two lanes of edges that skip past a band's rows. */
const LANE_STEP = 10;
const PAD = 24;

export interface LayoutInput {
  layers: Array<{ id: string; inputs: string[] }>;
  /** Layer id → stage; layers without a stage are laid out in a band of their own, without a frame. */
  stageOf: Map<string, number>;
}

export interface Point {
  x: number;
  y: number;
}

export interface Box extends Point {
  width: number;
  height: number;
}

/** An edge as a polyline in absolute coordinates, from the source's port to the target's. */
export interface LaidEdge {
  from: string;
  to: string;
  points: Point[];
  /** Routed in a lane beside the bands (it skips past rows of another stage): drawn dashed. */
  lane: boolean;
}

export interface LayoutResult {
  /** Stage boxes, absolute. */
  stages: Array<Box & { stage: number }>;
  /** Layer positions: relative to their stage box when `stage` is set, else absolute. */
  layers: Array<{ id: string; x: number; y: number; stage?: number }>;
  edges: LaidEdge[];
  /** The drawing's extent, stage frames and lanes included. */
  bounds: Box;
}

export const stageBoxId = (stage: number) => `stage-${stage}`;

interface Band {
  id: string;
  stage?: number;
  ids: string[];
}

/** One band per stage, plus one for layers without a stage; in the order of their first layer. */
export function bandsOf(input: LayoutInput): Band[] {
  const bands = new Map<string, Band>();
  for (const layer of input.layers) {
    const stage = input.stageOf.get(layer.id);
    const id = stage === undefined ? 'band-loose' : `band-${stage}`;
    const band = bands.get(id) ?? bands.set(id, { id, stage, ids: [] }).get(id)!;
    band.ids.push(layer.id);
  }
  return [...bands.values()];
}

const BAND_OPTIONS = {
  'elk.algorithm': 'layered',
  'elk.direction': 'DOWN',
  'elk.edgeRouting': 'ORTHOGONAL',
  // Keep the model's order among siblings (branches read left to right as the file lists them).
  'elk.layered.considerModelOrder.strategy': 'NODES_AND_EDGES',
  'elk.layered.nodePlacement.favorStraightEdges': 'true',
  'elk.layered.nodePlacement.bk.edgeStraightening': 'IMPROVE_STRAIGHTNESS',
  'elk.layered.spacing.nodeNodeBetweenLayers': '36',
  'elk.layered.spacing.edgeNodeBetweenLayers': '12',
  'elk.spacing.nodeNode': '28',
  'elk.spacing.edgeNode': '14',
  'elk.spacing.edgeEdge': '8',
};

const port = (id: string, side: 'NORTH' | 'SOUTH') => ({
  id: `${id}:${side === 'NORTH' ? 'in' : 'out'}`,
  width: 0,
  height: 0,
  x: NODE_WIDTH / 2,
  y: side === 'NORTH' ? 0 : NODE_HEIGHT,
  layoutOptions: { 'elk.port.side': side },
});

/** The elk graph: a root holding one compound node per band, each laid out on its own. */
export function elkGraph(input: LayoutInput): ElkNode {
  const bandOf = new Map<string, string>();
  const bands = bandsOf(input);
  for (const band of bands) for (const id of band.ids) bandOf.set(id, band.id);
  const byId = new Map(input.layers.map((l) => [l.id, l]));
  const children: ElkNode[] = bands.map((band) => {
    const edges: ElkExtendedEdge[] = [];
    for (const id of band.ids) {
      for (const from of byId.get(id)?.inputs ?? []) {
        if (bandOf.get(from) === band.id && from !== id) edges.push({ id: `${from}->${id}`, sources: [`${from}:out`], targets: [`${id}:in`] });
      }
    }
    return {
      id: band.id,
      layoutOptions: { ...BAND_OPTIONS, 'elk.padding': `[top=${band.stage === undefined ? PAD : STAGE_TOP},left=${PAD},bottom=${PAD},right=${PAD}]` },
      children: band.ids.map((id) => ({ id, width: NODE_WIDTH, height: NODE_HEIGHT, layoutOptions: { 'elk.portConstraints': 'FIXED_POS' }, ports: [port(id, 'NORTH'), port(id, 'SOUTH')] })),
      edges,
    };
  });
  return { id: 'root', layoutOptions: { 'elk.algorithm': 'layered', 'elk.hierarchyHandling': 'SEPARATE_CHILDREN' }, children, edges: [] };
}

/** Stack elk's bands, centre each in the common width, and route the edges between bands. */
export function fromElk(input: LayoutInput, out: ElkNode): LayoutResult {
  const bands = bandsOf(input);
  const laid = new Map((out.children ?? []).map((c) => [c.id, c]));
  const width = Math.max(MIN_STAGE_WIDTH, ...bands.map((b) => laid.get(b.id)?.width ?? 0));
  const result: LayoutResult = { stages: [], layers: [], edges: [], bounds: { x: 0, y: 0, width, height: 0 } };
  const at = new Map<string, Point & { band: number }>();
  const bandBox: Box[] = [];
  let y = 0;
  for (const [index, band] of bands.entries()) {
    const node = laid.get(band.id);
    const box = { x: 0, y, width, height: node?.height ?? 0 };
    const dx = (width - (node?.width ?? 0)) / 2;
    bandBox.push(box);
    if (band.stage !== undefined) result.stages.push({ ...box, stage: band.stage });
    for (const child of node?.children ?? []) {
      const [cx, cy] = [(child.x ?? 0) + dx, child.y ?? 0];
      at.set(child.id, { x: cx, y: y + cy, band: index });
      result.layers.push(band.stage === undefined ? { id: child.id, x: cx, y: y + cy } : { id: child.id, x: cx, y: cy, stage: band.stage });
    }
    for (const edge of (node?.edges ?? []) as ElkExtendedEdge[]) {
      const [from, to] = edge.id.split('->');
      const points = (edge.sections ?? []).flatMap((s) => [s.startPoint, ...(s.bendPoints ?? []), s.endPoint]).map((p) => ({ x: p.x + dx, y: p.y + y }));
      if (points.length >= 2) result.edges.push({ from, to, points, lane: false });
    }
    y += box.height + STAGE_GAP;
  }
  // A band's top and bottom rows: an edge between adjacent bands that leaves the one's bottom row for
  // the other's top row crosses no layer going straight down.
  const rows = bandBox.map(() => ({ top: Infinity, bottom: -Infinity }));
  for (const p of at.values()) {
    rows[p.band].top = Math.min(rows[p.band].top, p.y);
    rows[p.band].bottom = Math.max(rows[p.band].bottom, p.y);
  }
  let lanes = 0;
  for (const layer of input.layers) {
    const b = at.get(layer.id);
    for (const from of layer.inputs) {
      const a = at.get(from);
      if (!a || !b || a.band === b.band) continue;
      const [ax, bx] = [a.x + NODE_WIDTH / 2, b.x + NODE_WIDTH / 2];
      if (b.band === a.band + 1 && a.y === rows[a.band].bottom && b.y === rows[b.band].top) {
        const mid = bandBox[b.band].y - STAGE_GAP / 2;
        result.edges.push({ from, to: layer.id, lane: false, points: [{ x: ax, y: a.y + NODE_HEIGHT }, { x: ax, y: mid }, { x: bx, y: mid }, { x: bx, y: b.y }] });
        continue;
      }
      const x = width + LANE_STEP * ++lanes;
      const [ay, by] = [a.y + NODE_HEIGHT / 2, b.y + NODE_HEIGHT / 2];
      result.edges.push({ from, to: layer.id, lane: true, points: [{ x: a.x + NODE_WIDTH, y: ay }, { x, y: ay }, { x, y: by }, { x: b.x + NODE_WIDTH, y: by }] });
    }
  }
  result.bounds = { x: 0, y: 0, width: width + LANE_STEP * (lanes + 1), height: Math.max(0, y - STAGE_GAP) };
  return result;
}

const BETWEEN_LAYERS = Number(BAND_OPTIONS['elk.layered.spacing.nodeNodeBetweenLayers']);

/**
 * Elk's result for a graph whose every band is a chain (each layer feeds at most the next one in its
 * band): one straight column, which is what elk draws for it. Computed here, it costs nothing, where
 * elk's first layout in a fresh worker costs seconds on a loaded machine; undefined for any other graph.
 */
export function chainElk(graph: ElkNode): ElkNode | undefined {
  const bands: ElkNode[] = [];
  for (const band of graph.children ?? []) {
    const ids = (band.children ?? []).map((c) => c.id);
    const next = new Map(ids.slice(1).map((id, i) => [ids[i], id]));
    const edges = (band.edges ?? []) as ElkExtendedEdge[];
    if (edges.length !== ids.length - 1 || edges.some((e) => next.get(e.sources[0].replace(/:out$/, '')) !== e.targets[0].replace(/:in$/, ''))) return undefined;
    const top = band.layoutOptions?.['elk.padding']?.includes(`top=${STAGE_TOP}`) ? STAGE_TOP : PAD;
    const y = (i: number) => top + i * (NODE_HEIGHT + BETWEEN_LAYERS);
    const x = PAD + NODE_WIDTH / 2;
    bands.push({
      id: band.id,
      width: NODE_WIDTH + 2 * PAD,
      height: y(ids.length) - BETWEEN_LAYERS + PAD,
      children: ids.map((id, i) => ({ id, x: PAD, y: y(i), width: NODE_WIDTH, height: NODE_HEIGHT })),
      edges: edges.map((e, i) => ({ ...e, sections: [{ id: `${e.id}_s0`, startPoint: { x, y: y(i) + NODE_HEIGHT }, endPoint: { x, y: y(i + 1) } }] })),
    });
  }
  return { id: graph.id, children: bands };
}

/** Lay out with the given elk (its `layout` method); chains are laid out without it. */
export async function layeredLayout(input: LayoutInput, layout: (graph: ElkNode) => Promise<ElkNode>): Promise<LayoutResult> {
  const graph = elkGraph(input);
  return fromElk(input, chainElk(graph) ?? (await layout(graph)));
}
