import { useMemo, useState } from 'react';
import SchemaForm from './SchemaForm.jsx';
import { formSchema } from './schema.js';
import { api } from './api.js';
import { errorSchema, issuesOf } from './issues.js';
import Json from './Json.jsx';

const STARTING_TRACE = {
  runId: 'run_inspector',
  input: 'Where is my refund?',
  output: 'Your refund is on its way.',
  toolCalls: [],
  toolResults: [],
};

/** A guardrail check: a config form, a trace to check, pass or fail. */
export default function CheckView({ check, onLogs }) {
  const schema = useMemo(() => formSchema(check.configSchema || {}), [check.configSchema]);
  const [config, setConfig] = useState(undefined);
  const [trace, setTrace] = useState(JSON.stringify(STARTING_TRACE, null, 2));
  const [outcome, setOutcome] = useState(null);
  const [problem, setProblem] = useState(null);
  const run = async (value) => {
    setProblem(null);
    let parsed;
    try {
      parsed = JSON.parse(trace);
    } catch (e) {
      setProblem(`The trace is not JSON: ${e.message}`);
      return;
    }
    try {
      setOutcome(await api('check', { checkId: check.checkId || check.id, config: value ?? {}, trace: parsed }));
    } catch (e) {
      setProblem(e.message);
    }
  };
  const body = outcome?.response?.body;
  return (
    <div className="check" data-check={check.id}>
      <h2>
        {check.name || check.id} <span className="muted">check</span>
      </h2>
      <div className="facts">
        <span>{check.kind}</span>
        {check.severity && <span className="badge">severity {check.severity}</span>}
        {check.action?.onViolation && <span className="badge">on violation: {check.action.onViolation}</span>}
      </div>
      <div className="columns">
        <section>
          <h3>Config</h3>
          <SchemaForm
            schema={schema}
            formData={config}
            onChange={(e) => setConfig(e.formData)}
            onSubmit={(e) => run(e.formData)}
            extraErrors={body?.kind === 'error' ? errorSchema(issuesOf(body)) : undefined}
            idPrefix="config"
          >
            <button type="submit">Run the check</button>
          </SchemaForm>
        </section>
        <section>
          <h3>Trace</h3>
          <textarea className="raw trace" rows={14} value={trace} onChange={(e) => setTrace(e.target.value)} />
        </section>
      </div>
      {problem && <p className="error">{problem}</p>}
      {outcome && (
        <section className="result">
          {body?.kind === 'check-result' ? (
            <p className={body.result.passed ? 'headline ok' : 'headline error'} data-outcome={body.result.passed ? 'passed' : 'failed'}>
              {body.result.passed ? 'Passed' : 'Failed'}
              {body.result.reason && <span className="reason">: {body.result.reason}</span>}
            </p>
          ) : (
            <p className="headline error" data-outcome="error">
              {body?.code || `HTTP ${outcome.response.status}`}: {body?.message || body?.error}
            </p>
          )}
          <p className="muted">
            took {outcome.durationMs} ms ·{' '}
            <button type="button" className="link" onClick={() => onLogs(outcome.requestId)}>
              logs of this run
            </button>
          </p>
          <details>
            <summary>Request and response</summary>
            <Json value={{ request: outcome.request, response: outcome.response }} />
          </details>
        </section>
      )}
    </div>
  );
}
