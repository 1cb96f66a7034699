import Json from './Json.jsx';

const scalar = (v) => v === null || typeof v !== 'object';

/**
 * A declared value read as text: a scalar as itself, a list of scalars
 * joined, an object as its keys and values; deeper than `depth`, as JSON.
 */
export default function ValueView({ value, depth = 3 }) {
  if (scalar(value)) return <code>{typeof value === 'string' ? value : JSON.stringify(value)}</code>;
  if (Array.isArray(value) && value.every(scalar)) {
    return value.length ? <span>{value.map((v) => (typeof v === 'string' ? v : JSON.stringify(v))).join(', ')}</span> : <span className="muted">none</span>;
  }
  if (depth <= 0) return <Json value={value} />;
  if (Array.isArray(value)) {
    return (
      <ol className="values">
        {value.map((item, i) => (
          <li key={i}>
            <ValueView value={item} depth={depth - 1} />
          </li>
        ))}
      </ol>
    );
  }
  return (
    <dl className="values">
      {Object.entries(value).map(([key, item]) => (
        <div key={key}>
          <dt>{key}</dt>
          <dd>
            <ValueView value={item} depth={depth - 1} />
          </dd>
        </div>
      ))}
    </dl>
  );
}
