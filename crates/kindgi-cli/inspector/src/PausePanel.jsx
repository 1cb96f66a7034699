import { useMemo, useState } from 'react';
import SchemaForm from './SchemaForm.jsx';
import { formSchema } from './schema.js';
import { api } from './api.js';
import { errorSchema, issuesOf } from './issues.js';
import Json from './Json.jsx';

function duration(ms) {
  if (ms == null) return 'the runtime’s default (24 h)';
  const hours = ms / 3600000;
  return hours >= 1 ? `${+hours.toFixed(2)} h` : `${Math.round(ms / 1000)} s`;
}

/** A paused call: what it waits for, and a form that posts its answer. */
export default function PausePanel({ outcome, wait, onWait }) {
  const pause = outcome.pause || {};
  const schema = useMemo(() => formSchema(pause.outputSchema || {}), [pause.outputSchema]);
  const [data, setData] = useState(undefined);
  const [refusal, setRefusal] = useState(null);
  const [busy, setBusy] = useState(false);
  const post = async (value) => {
    setBusy(true);
    try {
      const answer = await api(`calls/${encodeURIComponent(outcome.callId)}/answer`, value ?? {});
      if (answer.response.status >= 200 && answer.response.status < 300) {
        setRefusal(null);
        onWait(answer.wait);
      } else setRefusal(answer.response);
    } catch (e) {
      setRefusal({ status: e.status, body: { error: e.message } });
    } finally {
      setBusy(false);
    }
  };
  return (
    <div className="pause">
      <p>
        Waits for <strong data-pause-name>{pause.name || 'an answer'}</strong>, at most {duration(pause.timeoutMs)}.
      </p>
      {wait?.state === 'completed' ? (
        <p className="ok" data-wait="completed">
          Answered: the call’s output is the posted answer.
        </p>
      ) : (
        <>
          <h4>Answer it (posts to its wait link)</h4>
          <SchemaForm
            schema={schema}
            formData={data}
            onChange={(e) => setData(e.formData)}
            onSubmit={(e) => post(e.formData)}
            extraErrors={errorSchema(issuesOf(refusal?.body))}
            idPrefix="answer"
            disabled={busy}
          >
            <button type="submit" disabled={busy}>
              Post the answer
            </button>
          </SchemaForm>
          {refusal && (
            <div className="error">
              The wait link answered {refusal.status}: <Json value={refusal.body} />
            </div>
          )}
        </>
      )}
    </div>
  );
}
