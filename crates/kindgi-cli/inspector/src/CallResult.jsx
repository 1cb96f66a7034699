import { useState } from 'react';
import { asCurl, asKindgiCall } from './copy.js';
import { issuePath } from './issues.js';
import Json from './Json.jsx';
import PausePanel from './PausePanel.jsx';
import FileList, { filesIn } from './FileList.jsx';

function Headline({ outcome }) {
  if (outcome.cancelled) {
    return (
      <p className="headline cancelled" data-outcome="cancelled">
        Cancelled: the connection to the pack service was closed, and the service ends the call{' '}
        <code>cancelled</code>
      </p>
    );
  }
  const { status, body } = outcome.response;
  if (status !== 200) {
    return (
      <p className="headline error" data-outcome="http">
        HTTP {status}: {body?.error || JSON.stringify(body)}
      </p>
    );
  }
  if (body.kind === 'result') return <p className="headline ok" data-outcome="result">Result</p>;
  if (body.kind === 'pause') return <p className="headline paused" data-outcome="pause">Paused</p>;
  if (body.kind === 'error')
    return (
      <p className="headline error" data-outcome="error">
        Error <code>{body.code}</code>: {body.message}
      </p>
    );
  return <p className="headline">{body.kind}</p>;
}

/** What one call sent and got. */
export default function CallResult({ outcome, tool, pack, issues, onLogs, onRerun, onAnswered }) {
  const [copied, setCopied] = useState(null);
  const body = outcome.response?.body;
  const [wait, setWait] = useState(outcome.wait || null);
  const output = body?.kind === 'result' ? body.output : wait?.state === 'completed' ? wait.output : null;
  const copy = (text) => {
    setCopied(text);
    navigator.clipboard?.writeText(text).catch(() => {});
  };
  const ctx = outcome.call?.ctx || {};
  return (
    <section className="result" data-call={outcome.callId}>
      <h3>Answer</h3>
      <Headline outcome={outcome} />
      <p className="muted">
        took <span data-duration>{outcome.durationMs}</span> ms · request id <code>{outcome.requestId}</code> ·
        idempotency key <code>{outcome.idempotencyKey || '—'}</code>
      </p>
      {outcome.call?.notKept?.length > 0 && (
        <p className="muted">
          Not kept in the history: {outcome.call.notKept.join(', ')} (a run again gets what kindgi dev adds from
          .kindgi/).
        </p>
      )}
      {issues.length > 0 && (
        <ul className="issues">
          {issues.map((issue, i) => (
            <li key={i}>
              <code>{'/' + issuePath(issue).join('/')}</code> {issue.message}
            </li>
          ))}
        </ul>
      )}
      {body?.kind === 'pause' && (
        <PausePanel outcome={outcome} wait={wait} onWait={(w) => { setWait(w); onAnswered(); }} />
      )}
      {output != null && (
        <>
          <h4>Output</h4>
          <Json value={output} className="json output" />
          <FileList files={filesIn(output)} runId={ctx.runId} tenantId={ctx.tenantId} />
        </>
      )}
      <div className="actions">
        <button type="button" onClick={() => copy(asKindgiCall(outcome, pack))}>
          copy as kindgi call
        </button>
        <button type="button" onClick={() => copy(asCurl(outcome))}>
          copy as curl
        </button>
        <button type="button" onClick={() => onLogs(outcome.requestId)}>
          logs of this call
        </button>
        <button type="button" onClick={() => onRerun(true)}>
          run again (same key)
        </button>
        <button type="button" onClick={() => onRerun(false)}>
          run again (new key)
        </button>
      </div>
      {copied && <pre className="copied">{copied}</pre>}
      <details>
        <summary>Request</summary>
        <Json value={outcome.request} className="json request" />
      </details>
      <details>
        <summary>Response</summary>
        <Json value={outcome.response} className="json response" />
      </details>
    </section>
  );
}
