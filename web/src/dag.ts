/**
 * The DAG of a run's kapps as SVG. Laid out once per set of kapps (dagre for up to DAGRE_LIMIT kapps; above, a
 * layered layout by longest path that stays fast on thousands), drawn in one go, then updated in place: a state
 * change sets one node's class, state label and accessible name, never a new layout.
 */
import dagre from '@dagrejs/dagre';
import { STATE_ICONS, type KappState } from './run-model';

const W = 190;
const H = 36;
const GAP_X = 50;
const GAP_Y = 10;
/** Above this many kapps dagre takes seconds; the layered layout takes milliseconds. */
export const DAGRE_LIMIT = 150;

export interface DagNode {
  id: string;
  dependsOn: readonly string[];
  state: KappState;
}

interface Placed {
  x: number;
  y: number;
}

export interface Layout {
  nodes: Map<string, Placed>;
  edges: { from: string; to: string; points: { x: number; y: number }[] }[];
  width: number;
  height: number;
}

/** Place the kapps: `x, y` is a node's top-left corner; edges run from a dependency to its dependent. */
export function layoutDag(nodes: readonly DagNode[]): Layout {
  return nodes.length <= DAGRE_LIMIT ? dagreLayout(nodes) : layeredLayout(nodes);
}

function dagreLayout(nodes: readonly DagNode[]): Layout {
  const g = new dagre.graphlib.Graph();
  g.setGraph({ rankdir: 'LR', nodesep: GAP_Y, ranksep: GAP_X, marginx: 4, marginy: 4 });
  g.setDefaultEdgeLabel(() => ({}));
  const ids = new Set(nodes.map((n) => n.id));
  for (const n of nodes) g.setNode(n.id, { width: W, height: H });
  for (const n of nodes) for (const d of n.dependsOn) if (ids.has(d)) g.setEdge(d, n.id);
  dagre.layout(g);
  const placed = new Map<string, Placed>();
  for (const n of nodes) {
    const p = g.node(n.id) as Placed;
    placed.set(n.id, { x: p.x - W / 2, y: p.y - H / 2 });
  }
  const edges = g.edges().map((e) => ({
    from: e.v,
    to: e.w,
    points: (g.edge(e) as { points?: Placed[] }).points ?? [],
  }));
  const graph = g.graph() as { width?: number; height?: number };
  return { nodes: placed, edges, width: (graph.width ?? 0) + 8, height: (graph.height ?? 0) + 8 };
}

function layeredLayout(nodes: readonly DagNode[]): Layout {
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const rank = new Map<string, number>();
  // Longest path from a root, iteratively (stacks of thousands of kapps are deep).
  for (const start of nodes) {
    if (rank.has(start.id)) continue;
    const stack: string[] = [start.id];
    const onPath = new Set<string>();
    while (stack.length) {
      const id = stack[stack.length - 1]!;
      const deps = (byId.get(id)?.dependsOn ?? []).filter((d) => byId.has(d) && !rank.has(d) && !onPath.has(d));
      if (deps.length && !onPath.has(id)) {
        onPath.add(id);
        stack.push(...deps);
        continue;
      }
      stack.pop();
      onPath.delete(id);
      if (rank.has(id)) continue;
      let r = 0;
      for (const d of byId.get(id)?.dependsOn ?? []) r = Math.max(r, (rank.get(d) ?? -1) + 1);
      rank.set(id, r);
    }
  }
  const layers: string[][] = [];
  for (const n of nodes) (layers[rank.get(n.id) ?? 0] ??= []).push(n.id);
  const position = new Map<string, number>();
  const placed = new Map<string, Placed>();
  let height = 0;
  layers.forEach((layer, r) => {
    // Order by the mean position of the dependencies (one sweep), keeping stack order on ties.
    const keyed = layer.map((id, i) => {
      const deps = (byId.get(id)?.dependsOn ?? []).filter((d) => position.has(d));
      const mean = deps.length ? deps.reduce((s, d) => s + position.get(d)!, 0) / deps.length : i;
      return { id, mean, i };
    });
    keyed.sort((a, b) => a.mean - b.mean || a.i - b.i);
    keyed.forEach(({ id }, i) => {
      position.set(id, i);
      placed.set(id, { x: 4 + r * (W + GAP_X), y: 4 + i * (H + GAP_Y) });
    });
    height = Math.max(height, keyed.length * (H + GAP_Y));
  });
  const edges: Layout['edges'] = [];
  for (const n of nodes)
    for (const d of n.dependsOn) {
      const a = placed.get(d);
      const b = placed.get(n.id);
      if (!a || !b) continue;
      edges.push({
        from: d,
        to: n.id,
        points: [
          { x: a.x + W, y: a.y + H / 2 },
          { x: b.x, y: b.y + H / 2 },
        ],
      });
    }
  return { nodes: placed, edges, width: 8 + layers.length * (W + GAP_X), height: height + 8 };
}

function esc(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function short(id: string): string {
  return id.length > 24 ? `…${id.slice(-23)}` : id;
}

/** A node's accessible name: what it shows (its id, cut when long, and its state), then the whole id if cut. */
function nodeLabel(id: string, state: KappState): string {
  const shown = short(id);
  return `${shown} ${state}${shown === id ? '' : `, ${id}`}`;
}

/** The SVG of a laid-out DAG, with every node in its current state. */
export function dagSvg(nodes: readonly DagNode[], layout: Layout): string {
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" class="dag" width="${layout.width}" height="${layout.height}" viewBox="0 0 ${layout.width} ${layout.height}" role="group" aria-label="DAG of the run's kapps">`,
    '<g class="edges" aria-hidden="true">',
  ];
  for (const e of layout.edges) {
    const pts = e.points;
    if (pts.length < 2) continue;
    let d = `M${pts[0]!.x},${pts[0]!.y}`;
    for (let i = 1; i < pts.length; i++) d += `L${pts[i]!.x},${pts[i]!.y}`;
    parts.push(`<path d="${d}"/>`);
  }
  parts.push('</g><g class="nodes">');
  for (const n of nodes) {
    const p = layout.nodes.get(n.id);
    if (!p) continue;
    // Ids and states come from the server: escaped like any text put into markup.
    const id = esc(n.id);
    const state = esc(n.state);
    parts.push(
      `<g class="kapp s-${state}" data-kapp="${id}" data-state="${state}" transform="translate(${p.x},${p.y})" tabindex="0" role="button" aria-label="${esc(nodeLabel(n.id, n.state))}">`,
      `<title>${id}</title><rect width="${W}" height="${H}" rx="5"/>`,
      `<text class="icon" x="10" y="23" aria-hidden="true">${STATE_ICONS[n.state] ?? '?'}</text>`,
      `<text class="name" x="28" y="15">${esc(short(n.id))} </text>`,
      `<text class="state" x="28" y="29">${state}</text></g>`,
    );
  }
  parts.push('</g></svg>');
  return parts.join('');
}

/** A DAG drawn into `container`: draw once, then `update` the nodes whose state changed. */
export class DagView {
  private readonly elements = new Map<string, Element>();
  private selected: string | null = null;
  /** The filter: nodes it does not keep are dimmed (null: every node shown as it is). */
  private keep: ((id: string, state: KappState) => boolean) | null = null;

  constructor(
    private readonly container: HTMLElement,
    onSelect: (id: string) => void,
  ) {
    container.addEventListener('click', (ev) => {
      const g = (ev.target as Element).closest('[data-kapp]');
      if (g) onSelect(g.getAttribute('data-kapp')!);
    });
    container.addEventListener('keydown', (ev) => {
      if (ev.key !== 'Enter' && ev.key !== ' ') return;
      const g = (ev.target as Element).closest('[data-kapp]');
      if (!g) return;
      ev.preventDefault();
      onSelect(g.getAttribute('data-kapp')!);
    });
  }

  private size = { width: 0, height: 0 };
  private scale = 1;

  draw(nodes: readonly DagNode[]): void {
    const layout = layoutDag(nodes);
    this.size = { width: layout.width, height: layout.height };
    this.container.innerHTML = dagSvg(nodes, layout);
    this.applyScale();
    this.elements.clear();
    for (const g of this.container.querySelectorAll('[data-kapp]')) this.elements.set(g.getAttribute('data-kapp')!, g);
    if (this.selected) this.select(this.selected);
    if (this.keep) this.filter(this.keep);
  }

  /** Dim the nodes `keep` does not keep (null: none dimmed); state changes keep applying it. */
  filter(keep: ((id: string, state: KappState) => boolean) | null): void {
    this.keep = keep;
    for (const [id, g] of this.elements)
      g.classList.toggle('dimmed', keep !== null && !keep(id, g.getAttribute('data-state') as KappState));
  }

  /** Show the new state of these kapps. */
  update(nodes: Iterable<DagNode>): void {
    for (const n of nodes) {
      const g = this.elements.get(n.id);
      if (!g || g.getAttribute('data-state') === n.state) continue;
      const dimmed = this.keep !== null && !this.keep(n.id, n.state);
      g.setAttribute(
        'class',
        `kapp s-${n.state}${n.id === this.selected ? ' selected' : ''}${dimmed ? ' dimmed' : ''}`,
      );
      g.setAttribute('data-state', n.state);
      g.setAttribute('aria-label', nodeLabel(n.id, n.state));
      const texts = g.getElementsByTagName('text');
      texts[0]!.textContent = STATE_ICONS[n.state] ?? '?';
      texts[2]!.textContent = n.state;
    }
  }

  /** Zoom by `factor` (kept between 5% and 300%), keeping the middle of the view in the middle. */
  zoom(factor: number): void {
    const box = this.container;
    const cx = (box.scrollLeft + box.clientWidth / 2) / this.scale;
    const cy = (box.scrollTop + box.clientHeight / 2) / this.scale;
    this.scale = Math.min(3, Math.max(0.05, this.scale * factor));
    this.applyScale();
    box.scrollLeft = cx * this.scale - box.clientWidth / 2;
    box.scrollTop = cy * this.scale - box.clientHeight / 2;
  }

  /** The whole DAG in the box (never larger than 100%). */
  fit(): void {
    const box = this.container;
    if (!this.size.width || !this.size.height) return;
    this.scale = Math.min(1, (box.clientWidth - 4) / this.size.width, (box.clientHeight - 4) / this.size.height);
    this.applyScale();
  }

  /** The current zoom, 1 = 100%. */
  get zoomLevel(): number {
    return this.scale;
  }

  private applyScale(): void {
    const svg = this.container.querySelector('svg');
    if (!svg) return;
    svg.setAttribute('width', String(Math.round(this.size.width * this.scale)));
    svg.setAttribute('height', String(Math.round(this.size.height * this.scale)));
  }

  /** Whether the kapp's node is wholly inside the box's visible part. */
  isVisible(id: string): boolean {
    const g = this.elements.get(id);
    if (!g) return false;
    const r = g.getBoundingClientRect();
    const b = this.container.getBoundingClientRect();
    return r.top >= b.top && r.bottom <= b.bottom && r.left >= b.left && r.right <= b.right;
  }

  /** Scroll the box so the kapp's node is in its middle (as far as it goes), and into the window. */
  reveal(id: string): void {
    const g = this.elements.get(id);
    if (!g) return;
    const r = g.getBoundingClientRect();
    const b = this.container.getBoundingClientRect();
    const box = this.container;
    box.scrollLeft += r.left + r.width / 2 - (b.left + box.clientWidth / 2);
    box.scrollTop += r.top + r.height / 2 - (b.top + box.clientHeight / 2);
    // And the node in the window.
    const now = g.getBoundingClientRect();
    if (now.top < 0 || now.bottom > innerHeight) g.scrollIntoView({ block: 'nearest', inline: 'nearest' });
  }

  /** Move the keyboard focus to the kapp's node. */
  focus(id: string): void {
    (this.elements.get(id) as SVGElement | undefined)?.focus({ preventScroll: true });
  }

  select(id: string | null): void {
    if (this.selected) this.elements.get(this.selected)?.classList.remove('selected');
    this.selected = id;
    if (id) this.elements.get(id)?.classList.add('selected');
  }
}
