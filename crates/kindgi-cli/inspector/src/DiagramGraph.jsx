import DiagramNode from './DiagramNode.jsx';

// A path through dagre's points, its corners rounded.
function pathThrough(points) {
  if (!points?.length) return '';
  const [first, ...rest] = points;
  let d = `M${first.x},${first.y}`;
  for (let i = 0; i < rest.length - 1; i++) {
    const p = rest[i];
    const next = rest[i + 1];
    d += ` Q${p.x},${p.y} ${(p.x + next.x) / 2},${(p.y + next.y) / 2}`;
  }
  const last = rest[rest.length - 1] || first;
  return `${d} L${last.x},${last.y}`;
}

// An edge: its arrow, and its `when` and policy beside it.
function Edge({ edge, arrow }) {
  const { label } = edge;
  return (
    <g className={edge.when ? 'edge conditional' : 'edge'} data-edge={edge.id} data-from={edge.from} data-to={edge.to}>
      <path d={pathThrough(edge.points)} markerEnd={`url(#${arrow})`} />
      {label && (
        <g className="edge-label" data-when={edge.when ?? undefined} transform={`translate(${label.x - label.width / 2},${label.y - label.height / 2})`}>
          <rect width={label.width} height={label.height} rx="3" />
          {label.lines.map((line, i) => (
            <text key={i} x={5} y={15 + i * 16} className={i < label.whenLines ? 'when' : 'policy'}>
              {line}
            </text>
          ))}
        </g>
      )}
    </g>
  );
}

/** A laid-out graph: edges under boxes; a loop's body inside its box. */
export default function DiagramGraph({ graph, arrow, index, onOpen }) {
  return (
    <g className="graph">
      {graph.edges.map((edge) => (
        <Edge key={edge.id} edge={edge} arrow={arrow} />
      ))}
      {graph.nodes.map((box) => (
        <DiagramNode key={box.id} box={box} index={index} onOpen={onOpen}>
          {box.body && (
            <g className="body" transform={`translate(${box.body.x},${box.body.y})`}>
              <DiagramGraph graph={box.body} arrow={arrow} index={index} onOpen={onOpen} />
            </g>
          )}
        </DiagramNode>
      ))}
    </g>
  );
}
