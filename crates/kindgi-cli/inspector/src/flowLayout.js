// A flow (flow.schema.json) as boxes and arrows with places: what each
// node says and links to, laid out by dagre. A loop's body is laid out
// the same way and drawn inside the loop's box. Pure: the page gives the
// text's width (`measure`); the tests in Node use `roughWidth`.

import { graphlib, layout } from '@dagrejs/dagre';
import { exprText, operandText, policyText } from './expr.js';

/** The flow's entry and exit, and a loop body's. */
export const FLOW_ENDS = { start: '$start', end: '$end' };
export const LOOP_ENDS = { start: '$loop-start', end: '$loop-end' };

/** Sizes of the drawing, in pixels. */
export const SIZE = { padX: 12, padY: 8, title: 18, line: 16, row: 20, minWidth: 110, labelWrap: 38 };

/** About how wide `text` is: 7 px a character, 7.5 in a title. */
export function roughWidth(text, style) {
  return String(text).length * (style === 'title' ? 7.5 : 7);
}

/** `text` in lines of at most `max` characters, broken between words. */
export function wrap(text, max) {
  const lines = [];
  let line = '';
  for (const word of String(text).split(' ')) {
    if (line && line.length + 1 + word.length > max) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  if (line || !lines.length) lines.push(line);
  return lines;
}

function mappingNotes(mapping) {
  if (!mapping || typeof mapping !== 'object') return [];
  return Object.entries(mapping).map(([key, operand]) => `${key} ← ${operandText(operand)}`);
}

// What a node says: its title, the lines under it, what it opens, its rows.
function describe(node) {
  const id = typeof node?.id === 'string' ? node.id : '(no id)';
  const base = { id, title: id, detail: [], target: null, notes: [], node };
  switch (node?.kind) {
    case 'tool':
    case 'agent':
      return {
        ...base,
        kind: node.kind,
        detail: [`${node.kind} · ${node.ref}`],
        target: typeof node.ref === 'string' ? { kind: node.kind, id: node.ref } : null,
        notes: mappingNotes(node.inputMapping).map((n) => `input: ${n}`),
      };
    case 'subgraph': {
      const ref = node.flowRef || {};
      return {
        ...base,
        kind: 'subgraph',
        detail: [`sub-flow · ${ref.flowId} ${ref.version || ''}`.trim(), node.convergence || 'settle-all'],
        target: typeof ref.flowId === 'string' ? { kind: 'flow', id: ref.flowId, version: ref.version } : null,
        notes: mappingNotes(node.inputMapping).map((n) => `input: ${n}`),
      };
    }
    case 'fanout': {
      const branches = (Array.isArray(node.branches) ? node.branches : []).map((b) => ({
        id: b?.branchId,
        text: `${b?.branchId} → ${b?.handler}`,
        target: typeof b?.handler === 'string' ? { kind: 'tool', id: b.handler } : null,
      }));
      const mode = [node.convergence, node.concurrency && `${node.concurrency} at a time`].filter(Boolean);
      return { ...base, kind: 'fanout', detail: [`fanout · ${mode.join(' · ')}`], branches };
    }
    case 'loop': {
      const bounds = [`at most ${node.maxIterations}`];
      let what;
      if (node.loopKind === 'foreach') {
        what = [`loop · foreach over ${operandText(node.iterateOver)}`];
        if (node.concurrency) bounds.push(`${node.concurrency} at a time`);
      } else {
        what = wrap(`loop · while, until ${exprText(node.exitCondition)}`, SIZE.labelWrap);
        bounds.push(node.evaluationTiming === 'before' ? 'checked first' : 'checked after each');
      }
      return { ...base, kind: 'loop', detail: [...what, bounds.join(' · ')] };
    }
    default:
      return { ...base, kind: 'unknown', detail: [`kind ${JSON.stringify(node?.kind)}: not one this page draws`] };
  }
}

function sentinel(id, end) {
  return { id, kind: end, title: id, detail: [], target: null, notes: [] };
}

function missing(id) {
  return { id, kind: 'missing', title: id, detail: ['not a node of this flow'], target: null, notes: [] };
}

// The box's size, and where its rows and body go inside it.
function size(box, measure) {
  const widths = [measure(box.title, 'title'), ...box.detail.map((l) => measure(l, 'detail'))];
  let height = SIZE.padY * 2 + SIZE.title + box.detail.length * SIZE.line;
  if (box.kind === 'start' || box.kind === 'end') {
    return { ...box, width: Math.max(...widths) + 2 * SIZE.padX + 8, height: SIZE.title + 2 * SIZE.padY };
  }
  if (box.branches) {
    box.branches = box.branches.map((b, i) => ({ ...b, y: height - SIZE.padY + 4 + i * SIZE.row }));
    widths.push(...box.branches.map((b) => measure(b.text, 'detail') + 16));
    height += box.branches.length * SIZE.row + 4;
  }
  let body;
  if (box.kind === 'loop') {
    const inner = box.node.body || {};
    body = layoutGraph(inner.nodes, inner.edges, measure, LOOP_ENDS);
    body.x = SIZE.padX;
    body.y = height - SIZE.padY + 6;
    widths.push(body.width);
    height = body.y + body.height + SIZE.padY;
  }
  const width = Math.max(SIZE.minWidth, Math.max(...widths) + 2 * SIZE.padX);
  if (body) body.x = (width - body.width) / 2;
  return { ...box, width, height, body };
}

function edgeLabel(edge, measure) {
  const when = edge.when === undefined ? [] : wrap(exprText(edge.when), SIZE.labelWrap);
  const policy = policyText(edge.policy);
  const lines = policy ? [...when, policy] : when;
  if (!lines.length) return null;
  return {
    lines,
    whenLines: when.length,
    width: Math.max(...lines.map((l) => measure(l, 'detail'))) + 10,
    height: lines.length * SIZE.line + 6,
  };
}

/** Nodes and edges (a flow's, or a loop body's with `LOOP_ENDS`) laid out. */
export function layoutGraph(nodes, edges, measure = roughWidth, ends = FLOW_ENDS) {
  const boxes = new Map();
  const add = (box) => boxes.has(box.id) || boxes.set(box.id, size(box, measure));
  add(sentinel(ends.start, 'start'));
  for (const node of Array.isArray(nodes) ? nodes : []) add(describe(node));
  add(sentinel(ends.end, 'end'));
  const links = (Array.isArray(edges) ? edges : []).map((edge, i) => ({
    id: typeof edge?.id === 'string' ? edge.id : `edge ${i + 1}`,
    from: String(edge?.from),
    to: String(edge?.to),
    when: edge?.when === undefined ? null : exprText(edge.when),
    policy: policyText(edge?.policy),
    label: edgeLabel(edge || {}, measure),
  }));
  for (const link of links) for (const end of [link.from, link.to]) add(missing(end));

  const g = new graphlib.Graph({ multigraph: true });
  g.setGraph({ rankdir: 'TB', nodesep: 28, ranksep: 36, edgesep: 14, marginx: 6, marginy: 6 });
  for (const box of boxes.values()) g.setNode(box.id, { width: box.width, height: box.height });
  links.forEach((link, i) => {
    const label = link.label ? { width: link.label.width, height: link.label.height, labelpos: 'c' } : {};
    g.setEdge(link.from, link.to, label, `${i}`);
  });
  layout(g);

  const placed = [...boxes.values()].map((box) => {
    const at = g.node(box.id);
    return { ...box, x: at.x - box.width / 2, y: at.y - box.height / 2 };
  });
  const drawn = links.map((link, i) => {
    const at = g.edge({ v: link.from, w: link.to, name: `${i}` });
    return {
      ...link,
      points: at.points,
      label: link.label && { ...link.label, x: at.x, y: at.y },
    };
  });
  const { width, height } = g.graph();
  return { width, height, nodes: placed, edges: drawn };
}

/** A flow of the index laid out: its nodes, `$start`, `$end` and edges. */
export function layoutFlow(flow, measure = roughWidth) {
  return layoutGraph(flow?.nodes, flow?.edges, measure, FLOW_ENDS);
}
