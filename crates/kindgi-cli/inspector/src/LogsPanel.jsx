import { useEffect, useLayoutEffect, useRef, useState } from 'react';
import { streamLogs } from './api.js';

const KEEP = 1000;
/** How close to the end the panel counts as at the newest record, in pixels. */
const AT_END = 24;

/**
 * The service's log records, live, filtered to one call's request id. The
 * panel follows the newest records while it is scrolled to its end; a user
 * who scrolls back keeps their place, and "newest" takes them back.
 */
export default function LogsPanel({ filter, onFilter }) {
  const [records, setRecords] = useState([]);
  const [state, setState] = useState('connecting');
  const [following, setFollowing] = useState(true);
  const panel = useRef(null);
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
  const toEnd = () => {
    const el = panel.current;
    if (el) el.scrollTop = el.scrollHeight;
  };
  // After each new record (or a new filter), back to the end while following.
  useLayoutEffect(() => {
    if (following) toEnd();
  }, [records, filter, following]);
  const onScroll = () => {
    const el = panel.current;
    if (el) setFollowing(el.scrollHeight - el.scrollTop - el.clientHeight <= AT_END);
  };
  return (
    <section
      className="logs"
      ref={panel}
      onScroll={onScroll}
      data-following={following}
      data-records={records.length}
    >
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
        {!following && (
          <button type="button" className="newest" onClick={() => setFollowing(true)}>
            ↓ newest
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
