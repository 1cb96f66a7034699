import { useState } from 'react';
import RefLink from './RefLink.jsx';
import AgentSettings from './AgentSettings.jsx';
import ViewSwitch from './ViewSwitch.jsx';
import Json from './Json.jsx';
import { flowsUsing } from './packIndex.js';

function Instructions({ instructions }) {
  if (instructions && typeof instructions === 'object') {
    return (
      <p>
        The prompt block <code>{instructions.prompt}</code> <span className="muted">{instructions.version}</span>
      </p>
    );
  }
  if (!instructions) return <p className="muted">None.</p>;
  return <p className="instructions">{instructions}</p>;
}

/** An agent: its instructions, and its tools, guardrails and settings as links and text. */
export default function AgentView({ agent, index, onOpen }) {
  const [raw, setRaw] = useState(false);
  const tools = Array.isArray(agent.tools) ? agent.tools : [];
  const guardrails = Array.isArray(agent.guardrails) ? agent.guardrails : [];
  const flows = flowsUsing(index, 'agent', agent.id);
  return (
    <div className="agent" data-agent={agent.id}>
      <h2>
        {agent.name || agent.id} <span className="muted">agent</span>
      </h2>
      {agent.description && <p className="description">{agent.description}</p>}
      <div className="facts">
        <span>
          <code>{agent.id}</code>
        </span>
        <span>version {agent.version || '—'}</span>
        {(agent.tags || []).map((tag) => (
          <span key={tag} className="badge tag">
            {tag}
          </span>
        ))}
        {agent.modulePath && <span className="muted">{agent.modulePath}</span>}
      </div>
      <ViewSwitch raw={raw} onRaw={setRaw} picture="overview" />
      {raw ? (
        <Json value={agent} />
      ) : (
        <>
          <section className="facts-block" data-section="instructions">
            <h3>Instructions</h3>
            <Instructions instructions={agent.instructions} />
          </section>
          <section className="facts-block" data-section="tools">
            <h3>Tools ({tools.length})</h3>
            {tools.length ? (
              <ul className="refs">
                {tools.map((t) => (
                  <li key={`${t.id}@${t.version}`}>
                    <RefLink index={index} kind="tool" id={t.id} onOpen={onOpen} />{' '}
                    <span className="muted">{t.version}</span>
                  </li>
                ))}
              </ul>
            ) : (
              <p className="muted">None: it only answers.</p>
            )}
          </section>
          <section className="facts-block" data-section="guardrails">
            <h3>Guardrails ({guardrails.length})</h3>
            {guardrails.length ? (
              <ul className="refs">
                {guardrails.map((id) => (
                  <li key={id}>
                    <RefLink index={index} kind="check" id={id} onOpen={onOpen} />
                  </li>
                ))}
              </ul>
            ) : (
              <p className="muted">None.</p>
            )}
          </section>
          <AgentSettings agent={agent} />
          {flows.length > 0 && (
            <section className="facts-block" data-section="flows">
              <h3>In flows</h3>
              <ul className="refs">
                {flows.map((f) => (
                  <li key={f.id}>
                    <RefLink index={index} kind="flow" id={f.id} onOpen={onOpen} />
                  </li>
                ))}
              </ul>
            </section>
          )}
        </>
      )}
    </div>
  );
}
