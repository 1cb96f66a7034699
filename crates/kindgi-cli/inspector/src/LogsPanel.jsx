import { useEffect, useState } from 'react';
import { streamLogs } from './api.js';

const KEEP = 1000;

/** The service's log records, live, filtered to one call's request id. */
export default function LogsPanel({ filter, onFilter }) {
  const [records, setRecords] = useState([]);
  const [state, setState] = useState('connecting');
  useEffect(() => {
    const abort = new AbortController();
    setState('live');
    streamLogs((record) => setRecords((all) => [...all.slice(-(KEEP - 1)), record]), abort.signal).catch(
      (e) => !abort.signal.aborted && setState(`stopped: ${e.message}`),
    );
    return () => abort.abort();
  }, []);
  const shown = filter
    ? records.filter((r) => r.requestId === filter || JSON.stringify(r).includes(filter))
    : records;
  return (
    <section className="logs">
      <h3>
        Logs <span className="muted">({state})</span>
        <input
          name="logFilter"
          placeholder="filter: a request id or any text"
          value={filter}
          onChange={(e) => onFilter(e.target.value)}
        />
        {filter && (
          <button type="button" className="link" onClick={() => onFilter('')}>
            all
          </button>
        )}
      </h3>
      <ol>
        {shown.slice(-200).map((r) => (
          <li key={r.seq} className={`level-${r.level || 'info'}`} data-request={r.requestId || ''}>
            <span className="muted">{r.time || r.timestamp || ''}</span> <span>gen {r.generation}</span>{' '}
            <strong>{r.level || 'info'}</strong> {r.message}
            {r.requestId && <code> {r.requestId}</code>}
            {r.toolId && <code> {r.toolId}</code>}
          </li>
        ))}
      </ol>
    </section>
  );
}
