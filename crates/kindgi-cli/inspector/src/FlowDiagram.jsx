import { useId, useMemo } from 'react';
import { layoutFlow } from './flowLayout.js';
import DiagramGraph from './DiagramGraph.jsx';

const FONTS = { title: '600 13px system-ui, sans-serif', detail: '12px system-ui, sans-serif' };
let context;

// How wide the page draws `text` in the diagram's `style`.
function measure(text, style) {
  context ||= document.createElement('canvas').getContext('2d');
  context.font = FONTS[style] || FONTS.detail;
  return Math.ceil(context.measureText(String(text)).width);
}

/** A flow drawn: its nodes, `$start`, `$end`, and edges with their `when`. */
export default function FlowDiagram({ flow, index, onOpen }) {
  const arrow = `arrow${useId().replace(/:/g, '')}`;
  const drawn = useMemo(() => {
    try {
      return { graph: layoutFlow(flow, measure) };
    } catch (e) {
      return { problem: e.message || String(e) };
    }
  }, [flow]);
  if (drawn.problem) {
    return (
      <p className="error" role="alert">
        This flow can't be drawn: {drawn.problem}. Its JSON is under raw JSON.
      </p>
    );
  }
  const { graph } = drawn;
  return (
    <div className="diagram">
      <svg
        width={graph.width}
        height={graph.height}
        viewBox={`0 0 ${graph.width} ${graph.height}`}
        role="group"
        aria-label={`The flow ${flow.id}: its nodes and edges`}
      >
        <defs>
          <marker id={arrow} viewBox="0 0 10 10" refX="9" refY="5" markerWidth="8" markerHeight="8" orient="auto-start-reverse">
            <path d="M0,0 L10,5 L0,10 z" />
          </marker>
        </defs>
        <DiagramGraph graph={graph} arrow={arrow} index={index} onOpen={onOpen} />
      </svg>
    </div>
  );
}
