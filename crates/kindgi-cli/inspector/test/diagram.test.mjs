// A flow laid out for its diagram, and its `when` predicates as text.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { layoutFlow } from '../src/flowLayout.js';
import { exprText, policyText } from '../src/expr.js';

const flow = {
  id: 'acme.f',
  nodes: [
    { id: 'pick', kind: 'agent', ref: 'acme.picker' },
    {
      id: 'each',
      kind: 'loop',
      loopKind: 'foreach',
      iterateOver: { path: 'runInput.items' },
      maxIterations: 10,
      outputSchema: {},
      body: {
        nodes: [{ id: 'do', kind: 'tool', ref: 'acme.do' }],
        edges: [
          { id: 'in', from: '$loop-start', to: 'do' },
          { id: 'out', from: 'do', to: '$loop-end' },
        ],
      },
    },
    {
      id: 'both',
      kind: 'fanout',
      convergence: 'all-succeed',
      branches: [
        { branchId: 'a', handler: 'acme.a', outputSchema: {} },
        { branchId: 'b', handler: 'acme.b', outputSchema: {} },
      ],
    },
    { id: 'sub', kind: 'subgraph', flowRef: { flowId: 'acme.other', version: '1.0.0' }, inputMapping: {}, outputSchema: {}, convergence: 'success-only' },
  ],
  edges: [
    { id: 's', from: '$start', to: 'pick' },
    { id: 'many', from: 'pick', to: 'each', when: { op: 'gt', left: { path: 'nodeOutputs.pick.n' }, right: { literal: 1 } } },
    { id: 'few', from: 'pick', to: 'both', when: { op: 'lte', left: { path: 'nodeOutputs.pick.n' }, right: { literal: 1 } }, policy: { timeoutMs: 5000 } },
    { id: 'e1', from: 'each', to: 'sub' },
    { id: 'e2', from: 'both', to: 'sub' },
    { id: 'end', from: 'sub', to: '$end' },
    { id: 'lost', from: 'sub', to: 'ghost' },
  ],
};

const overlap = (a, b) => a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;

test('every node, $start, $end and every edge is placed, no two boxes on each other', () => {
  const graph = layoutFlow(flow);
  const ids = graph.nodes.map((n) => n.id).sort();
  assert.deepEqual(ids, ['$end', '$start', 'both', 'each', 'ghost', 'pick', 'sub']);
  assert.deepEqual(graph.edges.map((e) => e.id), ['s', 'many', 'few', 'e1', 'e2', 'end', 'lost']);
  for (const edge of graph.edges) assert.ok(edge.points.length >= 2, edge.id);
  for (const a of graph.nodes) {
    assert.ok(a.x >= 0 && a.y >= 0 && a.x + a.width <= graph.width && a.y + a.height <= graph.height, a.id);
    for (const b of graph.nodes) if (a !== b) assert.ok(!overlap(a, b), `${a.id} on ${b.id}`);
  }
  const y = (id) => graph.nodes.find((n) => n.id === id).y;
  assert.ok(y('$start') < y('pick') && y('pick') < y('each') && y('sub') < y('$end'), 'top to bottom');
});

test('a node says what it runs and opens it; an edge end the flow lacks is marked', () => {
  const graph = layoutFlow(flow);
  const box = (id) => graph.nodes.find((n) => n.id === id);
  assert.deepEqual(box('pick').target, { kind: 'agent', id: 'acme.picker' });
  assert.deepEqual(box('pick').detail, ['agent · acme.picker']);
  assert.deepEqual(box('sub').target, { kind: 'flow', id: 'acme.other', version: '1.0.0' });
  assert.deepEqual(box('both').branches.map((b) => [b.text, b.target.id]), [
    ['a → acme.a', 'acme.a'],
    ['b → acme.b', 'acme.b'],
  ]);
  assert.equal(box('ghost').kind, 'missing');
});

test('an edge carries its when and policy as its label', () => {
  const graph = layoutFlow(flow);
  const edge = (id) => graph.edges.find((e) => e.id === id);
  assert.equal(edge('many').when, 'nodeOutputs.pick.n > 1');
  assert.deepEqual(edge('few').label.lines, ['nodeOutputs.pick.n ≤ 1', 'timeout 5000 ms']);
  assert.equal(edge('e1').label, null);
  assert.ok(Number.isFinite(edge('few').label.x) && Number.isFinite(edge('few').label.y));
});

test('a loop body is laid out inside its box, between $loop-start and $loop-end', () => {
  const loop = layoutFlow(flow).nodes.find((n) => n.id === 'each');
  assert.deepEqual(loop.detail, ['loop · foreach over runInput.items', 'at most 10']);
  const { body } = loop;
  assert.deepEqual(body.nodes.map((n) => n.id).sort(), ['$loop-end', '$loop-start', 'do']);
  assert.ok(body.x >= 0 && body.x + body.width <= loop.width);
  assert.ok(body.y > 0 && body.y + body.height <= loop.height);
});

test('a flow that is not a graph still draws what it can', () => {
  const graph = layoutFlow({ nodes: [{ kind: 'teleport' }], edges: [{ from: '$start', to: '$end' }] });
  assert.equal(graph.nodes.find((n) => n.kind === 'unknown').detail[0], 'kind "teleport": not one this page draws');
  assert.equal(graph.edges[0].id, 'edge 1');
  assert.deepEqual(layoutFlow({}).nodes.map((n) => n.id), ['$start', '$end']);
});

test('predicates and policies read as text', () => {
  const path = (p) => ({ path: p });
  const lit = (v) => ({ literal: v });
  assert.equal(exprText({ op: 'ne', left: path('state.x'), right: lit('a') }), 'state.x ≠ "a"');
  assert.equal(exprText({ op: 'in', value: path('runInput.tier'), set: lit(['gold', 'silver']) }), 'runInput.tier in ["gold","silver"]');
  assert.equal(exprText({ op: 'notExists', value: path('state.y') }), 'state.y is missing');
  assert.equal(
    exprText({
      op: 'and',
      children: [
        { op: 'truthy', value: path('state.ok') },
        { op: 'or', children: [{ op: 'exists', value: path('state.a') }, { op: 'falsy', value: path('state.b') }] },
      ],
    }),
    'state.ok is truthy and (state.a exists or state.b is falsy)',
  );
  assert.equal(exprText({ op: 'not', child: { op: 'notIn', value: path('state.c'), set: lit([1]) } }), 'not state.c not in [1]');
  assert.equal(exprText({ op: 'xor' }), '{"op":"xor"}');
  assert.equal(policyText({ retry: { maxAttempts: 3 }, concurrencyKey: 'ledger', priority: -2 }), 'retry ×3 · one at a time: ledger · priority -2');
});
