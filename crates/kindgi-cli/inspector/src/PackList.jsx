/** The pack's tools, checks, agents and flows, each a button. */
export default function PackList({ index, open, onOpen }) {
  const groups = [
    ['tool', 'Tools', index.tools],
    ['check', 'Checks', index.guardrails],
    ['agent', 'Agents', index.agents],
    ['flow', 'Flows', index.flows],
  ];
  return (
    <div className="pack-list">
      {groups.map(([kind, title, list]) => (
        <section key={kind} data-group={kind}>
          <h3>
            {title} <span className="muted">({(list || []).length})</span>
          </h3>
          <ul>
            {(list || []).map((e) => (
              <li key={e.id}>
                <button
                  type="button"
                  className={open?.kind === kind && open?.id === e.id ? 'item open' : 'item'}
                  data-id={e.id}
                  onClick={() => onOpen({ kind, id: e.id })}
                >
                  {e.id}
                </button>
              </li>
            ))}
          </ul>
        </section>
      ))}
    </div>
  );
}
