import ValueView from './ValueView.jsx';
import Json from './Json.jsx';

// What a runtime reads of an agent besides its instructions, tools and
// guardrails, in the order a reader looks for it.
const FIELDS = [
  ['preferredProvider', 'Preferred provider'],
  ['preferredModel', 'Preferred model'],
  ['capabilities', 'Capabilities'],
  ['budget', 'Budget'],
  ['toolErrors', 'Tool errors'],
  ['memory', 'Memory'],
  ['retrieval', 'Retrieval'],
  ['parameters', 'Parameters'],
  ['conversationPolicy', 'Conversation policy'],
];

// A settings block named by id and version range.
function Block({ block }) {
  return (
    <span className="badge block" data-block={block?.id}>
      {block?.id} <span className="muted">{block?.version}</span>
    </span>
  );
}

const present = (value) =>
  value !== undefined && value !== null && !(Array.isArray(value) && !value.length) && !(typeof value === 'object' && !Array.isArray(value) && !Object.keys(value).length);

/** An agent's settings: model, blocks, budget and the rest, as text. */
export default function AgentSettings({ agent }) {
  const rows = FIELDS.filter(([key]) => present(agent[key]));
  const blocks = Array.isArray(agent.settings) ? agent.settings : [];
  const nothing = !rows.length && !blocks.length && !agent.modelSettings && !agent.output;
  return (
    <section className="facts-block" data-section="settings">
      <h3>Settings</h3>
      {nothing && <p className="muted">No settings: a runtime's defaults apply.</p>}
      <dl className="values settings">
        {agent.modelSettings && (
          <div data-setting="modelSettings">
            <dt>Model settings</dt>
            <dd>
              <Block block={agent.modelSettings} />
            </dd>
          </div>
        )}
        {blocks.length > 0 && (
          <div data-setting="settings">
            <dt>Settings blocks</dt>
            <dd>
              {blocks.map((b, i) => (
                <Block key={i} block={b} />
              ))}
            </dd>
          </div>
        )}
        {rows.map(([key, title]) => (
          <div key={key} data-setting={key}>
            <dt>{title}</dt>
            <dd>
              <ValueView value={agent[key]} />
            </dd>
          </div>
        ))}
      </dl>
      {agent.output && (
        <details>
          <summary>Typed output{agent.output.name ? `: ${agent.output.name}` : ''}</summary>
          <Json value={agent.output} />
        </details>
      )}
    </section>
  );
}
