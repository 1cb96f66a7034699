import { useEffect, useState } from 'react';
import { api } from './api.js';

/** The calls made from this page, newest first. */
export default function HistoryList({ version, onOpen }) {
  const [calls, setCalls] = useState([]);
  useEffect(() => {
    api('history').then(setCalls).catch(() => setCalls([]));
  }, [version]);
  return (
    <section className="history" data-group="history">
      <h3>
        History <span className="muted">({calls.length})</span>
      </h3>
      <ul>
        {calls.map((c) => (
          <li key={c.callId + c.requestId}>
            <button type="button" className="item" data-call={c.callId} onClick={() => onOpen(c)}>
              {c.toolId} <span className="muted" data-summary>{summary(c)}</span>
            </button>
          </li>
        ))}
      </ul>
    </section>
  );
}

function summary(call) {
  if (call.cancelled) return 'cancelled';
  const body = call.response?.body;
  if (body?.kind === 'result') return 'result';
  if (body?.kind === 'pause') return call.wait?.state === 'completed' ? 'answered' : 'paused';
  if (body?.kind === 'error') return body.code;
  return `HTTP ${call.response?.status}`;
}
