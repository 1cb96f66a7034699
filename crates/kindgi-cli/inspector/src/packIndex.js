// Finding a pack's primitives in its index, and what refers to them.

const LISTS = { tool: 'tools', check: 'guardrails', agent: 'agents', flow: 'flows' };

/** The index's entry of `kind` (tool, check, agent, flow) with `id`, else null. */
export function entryOf(index, kind, id) {
  const list = index?.[LISTS[kind]];
  return (Array.isArray(list) && list.find((e) => e.id === id)) || null;
}

// Every node of a flow, those of its loops' bodies included.
function* nodesOf(nodes) {
  for (const node of Array.isArray(nodes) ? nodes : []) {
    yield node;
    if (node?.kind === 'loop') yield* nodesOf(node.body?.nodes);
  }
}

/** Whether `node` runs the tool, agent or flow `kind`/`id`. */
function runs(node, kind, id) {
  if (kind === 'tool' && node?.kind === 'fanout') return (node.branches || []).some((b) => b?.handler === id);
  if (kind === 'flow') return node?.kind === 'subgraph' && node.flowRef?.flowId === id;
  return node?.kind === kind && node.ref === id;
}

/** The flows of the index with a node that runs `kind`/`id`. */
export function flowsUsing(index, kind, id) {
  return (index?.flows || []).filter((flow) => [...nodesOf(flow.nodes)].some((n) => runs(n, kind, id)));
}
