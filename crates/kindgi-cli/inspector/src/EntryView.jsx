import Json from './Json.jsx';

/** An agent or a flow: what the index says of it. */
export default function EntryView({ entry, kind }) {
  return (
    <div className="entry">
      <h2>
        {entry.name || entry.id} <span className="muted">{kind}</span>
      </h2>
      {entry.description && <p>{entry.description}</p>}
      <Json value={entry} />
    </div>
  );
}
