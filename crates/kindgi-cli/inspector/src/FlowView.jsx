import { useState } from 'react';
import FlowDiagram from './FlowDiagram.jsx';
import ViewSwitch from './ViewSwitch.jsx';
import RefLink from './RefLink.jsx';
import Json from './Json.jsx';
import { operandText } from './expr.js';
import { flowsUsing } from './packIndex.js';

// The run's declared output: `key ← operand`, one a line.
function Output({ output }) {
  const mapping = output?.mapping;
  if (!mapping || typeof mapping !== 'object') return null;
  return (
    <div className="facts-block">
      <h3>Output</h3>
      <ul className="mapping">
        {Object.entries(mapping).map(([key, operand]) => (
          <li key={key}>
            <code>{key}</code> ← <code>{operandText(operand)}</code>
          </li>
        ))}
      </ul>
    </div>
  );
}

/** A flow: its facts, and a diagram of its nodes and edges, or its JSON. */
export default function FlowView({ flow, index, onOpen }) {
  const [raw, setRaw] = useState(false);
  const parents = flowsUsing(index, 'flow', flow.id);
  return (
    <div className="flow" data-flow={flow.id}>
      <h2>
        {flow.name || flow.id} <span className="muted">flow</span>
      </h2>
      {flow.description && <p className="description">{flow.description}</p>}
      <div className="facts">
        <span>
          <code>{flow.id}</code>
        </span>
        <span>version {flow.version || '—'}</span>
        {flow.maxParallelism && <span>at most {flow.maxParallelism} nodes at a time</span>}
        {flow.modulePath && <span className="muted">{flow.modulePath}</span>}
      </div>
      {parents.length > 0 && (
        <p className="used-by">
          A sub-flow of{' '}
          {parents.map((f) => (
            <RefLink key={f.id} index={index} kind="flow" id={f.id} onOpen={onOpen} />
          ))}
        </p>
      )}
      <ViewSwitch raw={raw} onRaw={setRaw} picture="diagram" />
      {raw ? <Json value={flow} /> : <FlowDiagram flow={flow} index={index} onOpen={onOpen} />}
      {!raw && <p className="muted hint">Click a node to open the tool, agent or flow it runs; hover one for its input mapping.</p>}
      <Output output={flow.output} />
    </div>
  );
}
