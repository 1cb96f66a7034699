/** A JSON value, pretty-printed. */
export default function Json({ value, className = 'json' }) {
  return <pre className={className}>{JSON.stringify(value, null, 2)}</pre>;
}
