import { useEffect, useMemo, useState } from 'react';
import SchemaForm from './SchemaForm.jsx';
import { formSchema } from './schema.js';
import { api } from './api.js';
import { errorSchema, issuesOf } from './issues.js';
import ContextPanel, { contextOf, initialContext } from './ContextPanel.jsx';
import CallResult from './CallResult.jsx';
import Json from './Json.jsx';

function flags(tool) {
  return [
    tool.mutating && 'mutating',
    tool.pauses && 'pauses',
    tool.storesFiles && 'storesFiles',
    tool.readsFiles && 'readsFiles',
    tool.needsApprovalWhenUnattended && 'needsApprovalWhenUnattended',
  ].filter(Boolean);
}

function Needs({ tool }) {
  const spec = tool.needsSpec || {};
  const groups = ['env', 'secrets', 'connections'].filter((g) => spec[g] && Object.keys(spec[g]).length);
  if (!groups.length && !tool.needs?.length) return <p className="muted">Needs nothing.</p>;
  return (
    <dl className="needs">
      {groups.map((g) => (
        <div key={g}>
          <dt>{g}</dt>
          <dd>{Object.keys(spec[g]).join(', ')}</dd>
        </div>
      ))}
    </dl>
  );
}

/** A declarative HTTP tool's request (`spec: {kind: "http"}`), in a line. */
function HttpRequest({ spec }) {
  if (!spec || spec.kind !== 'http') return null;
  const auth = spec.authorization;
  const parts = [
    auth?.kind === 'bearer' && `bearer ${auth.secretRef?.name}`,
    auth?.kind === 'header' && `${auth.headerName}: ${auth.secretRef?.name}`,
    spec.requestBody && `body ${spec.requestBody.kind}`,
    `timeout ${(spec.timeoutMs ?? 30000) / 1000} s`,
    spec.parseJson === false && 'answers text',
    spec.successStatus && `succeeds on ${spec.successStatus.min}–${spec.successStatus.max}`,
  ].filter(Boolean);
  return (
    <div className="http-spec" data-section="http">
      <p>
        An HTTP request, no code: <code>{spec.method} {spec.urlTemplate}</code>
      </p>
      <p className="muted">{parts.join(' · ')}</p>
      <details>
        <summary>Request spec</summary>
        <Json value={spec} />
      </details>
    </div>
  );
}

/** A call in flight: how long so far, and a button that cancels it. */
function Running({ ticket }) {
  const [started] = useState(() => Date.now());
  const [now, setNow] = useState(started);
  const [problem, setProblem] = useState(null);
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), 100);
    return () => clearInterval(timer);
  }, []);
  const cancel = () => api('cancel', { ticket }).catch((e) => setProblem(e.message));
  return (
    <p className="running" data-running>
      <span className="spinner" aria-hidden="true" />
      Running… <span data-elapsed>{((now - started) / 1000).toFixed(1)}</span> s{' '}
      <button type="button" onClick={cancel}>
        Cancel
      </button>
      {problem && <span className="error"> {problem}</span>}
    </p>
  );
}

/** One tool: what the index says of it, a form to call it, what came back. */
export default function ToolView({ tool, pack, past, onCalled, onLogs }) {
  const schema = useMemo(() => formSchema(tool.input && typeof tool.input === 'object' ? tool.input : {}), [tool.input]);
  const [input, setInput] = useState(past?.call?.input ?? undefined);
  const [raw, setRaw] = useState(false);
  const [rawText, setRawText] = useState('');
  const [rawProblem, setRawProblem] = useState(null);
  const [ctx, setCtx] = useState(() => initialContext(pack, tool, past?.call));
  const [outcome, setOutcome] = useState(past || null);
  // The page's name for the call in flight, to cancel it by; null when none is.
  const [busy, setBusy] = useState(null);
  const [problem, setProblem] = useState(null);
  const [key, setKey] = useState(past?.idempotencyKey || null);

  useEffect(() => {
    if (ctx.fixedKey) {
      setKey(ctx.fixedKey);
      return;
    }
    api('key', { toolId: tool.id, runId: ctx.runId, step: ctx.step, modelCallId: ctx.modelCallId })
      .then((k) => setKey(k.idempotencyKey))
      .catch(() => setKey(null));
  }, [tool.id, ctx.runId, ctx.step, ctx.modelCallId, ctx.fixedKey]);

  const issues = useMemo(() => {
    const body = outcome?.response?.body;
    return body?.kind === 'error' ? issuesOf(body) : [];
  }, [outcome]);

  const call = async (value, fixedKey) => {
    const ticket = crypto.randomUUID();
    setBusy(ticket);
    setProblem(null);
    try {
      const body = {
        ticket,
        toolId: tool.id,
        input: value ?? {},
        ctx: contextOf(ctx),
        step: ctx.step,
        modelCallId: ctx.modelCallId || undefined,
        idempotencyKey: fixedKey || ctx.fixedKey || undefined,
        timeoutMs: Number(ctx.timeoutMs) || undefined,
      };
      const answer = await api('call', body);
      setOutcome(answer);
      onCalled();
    } catch (e) {
      setProblem(e.message);
    } finally {
      setBusy(null);
    }
  };

  const submitRaw = (event) => {
    event.preventDefault();
    try {
      const value = JSON.parse(rawText || '{}');
      setRawProblem(null);
      setInput(value);
      call(value);
    } catch (e) {
      setRawProblem(`Not JSON: ${e.message}`);
    }
  };

  const toggleRaw = () => {
    if (!raw) setRawText(JSON.stringify(input ?? {}, null, 2));
    else {
      try {
        setInput(JSON.parse(rawText || '{}'));
      } catch {
        // Keep the form's last value.
      }
    }
    setRaw(!raw);
  };

  return (
    <div className="tool" data-tool={tool.id}>
      <h2>{tool.id}</h2>
      {tool.description && <p className="description">{tool.description}</p>}
      <div className="facts">
        <span>version {tool.version || '—'}</span>
        {flags(tool).map((f) => (
          <span key={f} className="badge flag" data-flag={f}>
            {f}
          </span>
        ))}
        {(tool.effects || []).map((e, i) => (
          <span key={i} className="badge effect">
            effect: {typeof e === 'string' ? e : [e.kind, e.resource].filter(Boolean).join(' ') || JSON.stringify(e)}
          </span>
        ))}
      </div>
      <HttpRequest spec={tool.spec} />
      <Needs tool={tool} />
      <details>
        <summary>Input schema</summary>
        <Json value={tool.input} />
      </details>
      <details>
        <summary>Output schema</summary>
        <Json value={tool.output} />
      </details>

      <div className="columns">
        <section className="call-form">
          <h3>
            Input{' '}
            <button type="button" className="link" onClick={toggleRaw}>
              {raw ? 'use the form' : 'raw JSON'}
            </button>
          </h3>
          {raw ? (
            <form onSubmit={submitRaw}>
              <textarea className="raw" rows={12} value={rawText} onChange={(e) => setRawText(e.target.value)} />
              {rawProblem && <p className="error">{rawProblem}</p>}
              <button type="submit" disabled={!!busy}>
                Call
              </button>
            </form>
          ) : (
            <SchemaForm
              schema={schema}
              formData={input}
              onChange={(e) => setInput(e.formData)}
              onSubmit={(e) => call(e.formData)}
              extraErrors={errorSchema(issues)}
              disabled={!!busy}
            >
              <button type="submit" disabled={!!busy}>
                Call
              </button>
            </SchemaForm>
          )}
        </section>
        <ContextPanel tool={tool} pack={pack} ctx={ctx} onChange={setCtx} idempotencyKey={key} />
      </div>
      {busy && <Running key={busy} ticket={busy} />}
      {problem && <p className="error">{problem}</p>}
      {outcome && !busy && (
        <CallResult
          key={outcome.requestId}
          outcome={outcome}
          tool={tool}
          pack={pack}
          issues={issues}
          onLogs={onLogs}
          onRerun={(same) => call(outcome.call?.input ?? input, same ? outcome.idempotencyKey : crypto.randomUUID())}
          onAnswered={onCalled}
        />
      )}
    </div>
  );
}
