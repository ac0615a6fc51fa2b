import type { Page } from '@playwright/test';

/**
 * What the layout test measures in the page, from the DOM and computed styles: interactive elements
 * that overlap or are cut off, text below WCAG AA contrast, page scroll and the graph's height. Each
 * finding names the element (tag, test id or class, text) so a failure says where to look.
 */
export interface LayoutReport {
  overlaps: string[];
  clipped: string[];
  lowContrast: string[];
  page: { scrollWidth: number; scrollHeight: number; width: number; height: number };
  graphHeight: number;
  interactive: number;
  texts: number;
}

/** Runs in the page (passed to page.evaluate as a function, so it must be self-contained). */
function measure(): LayoutReport {
  const INTERACTIVE = 'button, a[href], input:not([type="hidden"]), select, textarea, [role="tab"], [role="menuitem"], [role="separator"], summary';
  type Box = { left: number; top: number; right: number; bottom: number };
  const name = (el: Element): string => {
    const id = el.getAttribute('data-testid');
    const cls = typeof el.className === 'string' && el.className ? `.${el.className.trim().split(/\s+/).slice(0, 2).join('.')}` : '';
    const text = (el.textContent ?? '').trim().replace(/\s+/g, ' ').slice(0, 40);
    return `<${el.tagName.toLowerCase()}${id ? ` data-testid=${id}` : ''}${cls}> "${text}"`;
  };
  const clipsOverflow = (style: CSSStyleDeclaration) => style.overflowX !== 'visible' || style.overflowY !== 'visible';
  const scrolls = (style: CSSStyleDeclaration) => /auto|scroll/.test(style.overflowX) || /auto|scroll/.test(style.overflowY);
  /** The part of el's box left visible by its clipping ancestors and the viewport, and whether a clip that cannot scroll cut it. */
  const visibleBox = (el: Element): { box: Box | null; cutBy?: Element } => {
    const r = el.getBoundingClientRect();
    let box: Box = { left: r.left, top: r.top, right: r.right, bottom: r.bottom };
    let cutBy: Element | undefined;
    for (let a = el.parentElement; a; a = a.parentElement) {
      const style = getComputedStyle(a);
      if (!clipsOverflow(style)) continue;
      const c = a.getBoundingClientRect();
      const inside = box.left >= c.left - 1 && box.top >= c.top - 1 && box.right <= c.right + 1 && box.bottom <= c.bottom + 1;
      if (!inside && !scrolls(style) && a !== document.body && a !== document.documentElement) cutBy ??= a;
      box = { left: Math.max(box.left, c.left), top: Math.max(box.top, c.top), right: Math.min(box.right, c.right), bottom: Math.min(box.bottom, c.bottom) };
    }
    const vw = document.documentElement.clientWidth;
    const vh = document.documentElement.clientHeight;
    if (r.left < -1 || r.top < -1 || r.right > vw + 1 || r.bottom > vh + 1) {
      // Off the window: fine inside a scrolling pane (the user scrolls to it), not otherwise.
      let scrolled = false;
      for (let a = el.parentElement; a; a = a.parentElement) if (scrolls(getComputedStyle(a)) && a !== document.documentElement && a !== document.body) scrolled = true;
      if (!scrolled) cutBy ??= document.documentElement;
    }
    box = { left: Math.max(box.left, 0), top: Math.max(box.top, 0), right: Math.min(box.right, vw), bottom: Math.min(box.bottom, vh) };
    return { box: box.right - box.left > 1 && box.bottom - box.top > 1 ? box : null, cutBy };
  };
  const shown = (el: Element) => {
    const style = getComputedStyle(el);
    return style.visibility !== 'hidden' && style.display !== 'none' && Number(style.opacity) > 0.05 && !el.closest('[aria-hidden="true"], [inert]');
  };
  /** On top where it shows: a point of it hits it (not something laid over it, like a modal). */
  const onTop = (el: Element, box: Box) => {
    const points = [
      [(box.left + box.right) / 2, (box.top + box.bottom) / 2],
      [box.left + 2, box.top + 2],
      [box.right - 2, box.bottom - 2],
    ];
    return points.some(([x, y]) => {
      const hit = document.elementFromPoint(x, y);
      return !!hit && (hit === el || el.contains(hit) || hit.contains(el));
    });
  };
  // Canvas content (graph nodes) pans under the graph's own overlays by design: not part of the chrome.
  const canvasContent = (el: Element) => !!el.closest('.react-flow__node, .react-flow__edge, .react-flow__pane, .react-flow__minimap');

  const items: Array<{ el: Element; box: Box }> = [];
  const clipped: string[] = [];
  for (const el of document.querySelectorAll(INTERACTIVE)) {
    if (!shown(el) || canvasContent(el)) continue;
    const { box, cutBy } = visibleBox(el);
    if (!box || !onTop(el, box)) continue;
    if (cutBy) clipped.push(`${name(el)} is cut off by ${cutBy === document.documentElement ? 'the window' : name(cutBy)}`);
    // Its own content cut: a button or tab whose label does not fit (ellipsis is a deliberate cut).
    const style = getComputedStyle(el);
    if ((el.tagName === 'BUTTON' || el.getAttribute('role') === 'tab') && clipsOverflow(style) && style.textOverflow !== 'ellipsis' && (el.scrollWidth > el.clientWidth + 1 || el.scrollHeight > el.clientHeight + 1)) {
      clipped.push(`${name(el)}: its label does not fit (${el.scrollWidth}×${el.scrollHeight} in ${el.clientWidth}×${el.clientHeight})`);
    }
    items.push({ el, box });
  }
  const overlaps: string[] = [];
  for (let i = 0; i < items.length; i++) {
    for (let j = i + 1; j < items.length; j++) {
      const a = items[i];
      const b = items[j];
      if (a.el.contains(b.el) || b.el.contains(a.el)) continue;
      // A label's own control (a checkbox in its label) is one target.
      if (a.el.closest('label') && a.el.closest('label') === b.el.closest('label')) continue;
      const w = Math.min(a.box.right, b.box.right) - Math.max(a.box.left, b.box.left);
      const h = Math.min(a.box.bottom, b.box.bottom) - Math.max(a.box.top, b.box.top);
      if (w > 1 && h > 1) overlaps.push(`${name(a.el)} overlaps ${name(b.el)} by ${Math.round(w)}×${Math.round(h)} px`);
    }
  }

  // Contrast: every element with its own text, against the first opaque background behind it.
  const parse = (c: string): [number, number, number, number] => {
    const m = /rgba?\(([^)]+)\)/.exec(c);
    if (!m) return [0, 0, 0, 0];
    const p = m[1].split(/[\s,/]+/).filter(Boolean).map(Number);
    return [p[0], p[1], p[2], p.length > 3 ? p[3] : 1];
  };
  const over = (top: [number, number, number, number], bottom: [number, number, number]): [number, number, number] => [0, 1, 2].map((i) => top[i] * top[3] + bottom[i] * (1 - top[3])) as [number, number, number];
  const background = (el: Element): [number, number, number] | null => {
    const layers: Array<[number, number, number, number]> = [];
    for (let a: Element | null = el; a; a = a.parentElement) {
      const style = getComputedStyle(a);
      // A gradient or image behind the text: its colour is not one number; skip the element.
      if (style.backgroundImage !== 'none' && !a.classList.contains('react-flow')) return null;
      const c = parse(style.backgroundColor);
      if (c[3] > 0) layers.push(c);
      if (c[3] >= 1) break;
    }
    let rgb: [number, number, number] = [255, 255, 255];
    for (const layer of layers.reverse()) rgb = over(layer, rgb);
    return rgb;
  };
  const luminance = ([r, g, b]: [number, number, number]) => {
    const lin = (v: number) => ((v /= 255) <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4);
    return 0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b);
  };
  const lowContrast: string[] = [];
  let texts = 0;
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  const seen = new Set<Element>();
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const el = n.parentElement;
    if (!el || seen.has(el) || !(n.textContent ?? '').trim()) continue;
    seen.add(el);
    if (!shown(el) || el.closest('svg, option, [disabled], :disabled, [aria-disabled="true"]')) continue;
    const { box } = visibleBox(el);
    if (!box || !onTop(el, box)) continue;
    const style = getComputedStyle(el);
    const bg = background(el);
    if (!bg) continue;
    let opacity = 1;
    for (let a: Element | null = el; a; a = a.parentElement) opacity *= Number(getComputedStyle(a).opacity);
    const fg = over([...parse(style.color).slice(0, 3), parse(style.color)[3] * opacity] as [number, number, number, number], bg);
    const [l1, l2] = [luminance(fg), luminance(bg)].sort((x, y) => y - x);
    const ratio = (l1 + 0.05) / (l2 + 0.05);
    const size = parseFloat(style.fontSize);
    const bold = Number(style.fontWeight) >= 700;
    const needed = size >= 24 || (bold && size >= 18.66) ? 3 : 4.5;
    texts++;
    if (ratio < needed) lowContrast.push(`${name(el)}: ${ratio.toFixed(2)}:1 (needs ${needed}:1) — ${style.color} on rgb(${bg.map(Math.round).join(', ')})`);
  }

  const graph = document.querySelector('.graph');
  const root = document.scrollingElement ?? document.documentElement;
  return {
    overlaps,
    clipped,
    lowContrast,
    page: { scrollWidth: root.scrollWidth, scrollHeight: root.scrollHeight, width: window.innerWidth, height: window.innerHeight },
    graphHeight: graph ? graph.getBoundingClientRect().height : 0,
    interactive: items.length,
    texts,
  };
}

export function measureLayout(page: Page): Promise<LayoutReport> {
  return page.evaluate(measure);
}
