import { entryOf } from './packIndex.js';

const NAMES = { tool: 'tool', check: 'check', agent: 'agent', flow: 'flow' };

/**
 * A tool, check, agent or flow named by another primitive: a link that
 * opens it when the pack has it, else its name, marked as not in this pack.
 */
export default function RefLink({ index, kind, id, children, onOpen }) {
  const label = children ?? id;
  if (!entryOf(index, kind, id)) {
    return (
      <span className="ref missing" data-ref={id} data-ref-kind={kind} title={`No ${NAMES[kind]} ${id} in this pack`}>
        {label} <span className="muted">(not in this pack)</span>
      </span>
    );
  }
  return (
    <button
      type="button"
      className="link ref"
      data-ref={id}
      data-ref-kind={kind}
      title={`Open the ${NAMES[kind]} ${id}`}
      onClick={() => onOpen({ kind, id })}
    >
      {label}
    </button>
  );
}
