import { useEffect, useState } from 'react';
import { api } from './api.js';
import PackList from './PackList.jsx';
import ToolView from './ToolView.jsx';
import CheckView from './CheckView.jsx';
import AgentView from './AgentView.jsx';
import FlowView from './FlowView.jsx';
import LogsPanel from './LogsPanel.jsx';
import HistoryList from './HistoryList.jsx';
import { entryOf } from './packIndex.js';

/** The whole page: the pack on the left, what is open on the right, the logs below. */
export default function App() {
  const [pack, setPack] = useState(null);
  const [problem, setProblem] = useState(null);
  const [open, setOpen] = useState(null);
  const [logFilter, setLogFilter] = useState('');
  const [historyVersion, setHistoryVersion] = useState(0);

  useEffect(() => {
    let stopped = false;
    const load = () =>
      api('pack')
        .then((p) => {
          if (!stopped) {
            setPack(p);
            setProblem(null);
          }
        })
        .catch((e) => !stopped && setProblem(e.message));
    load();
    const timer = setInterval(load, 2000);
    return () => {
      stopped = true;
      clearInterval(timer);
    };
  }, []);

  if (problem && !pack) return <div className="refused">{problem}</div>;
  if (!pack) return <div className="loading">Loading…</div>;
  const index = pack.index;
  const entry = open && entryOf(index, open.kind, open.id);

  return (
    <div className="page">
      <header>
        <strong>Kindgi inspector</strong>
        {index ? (
          <span className="pack-name">
            {index.packId} {index.packVersion}
          </span>
        ) : (
          <span className="pack-name">no pack serving yet</span>
        )}
        {pack.generation != null && <span className="badge generation">generation {pack.generation}</span>}
        <span className="muted">{pack.serviceUrl}</span>
      </header>
      {pack.failure && (
        <div className="failure" role="alert">
          <strong>
            Build {pack.failure.generation} failed: {pack.failure.headline}
          </strong>
          <span>
            {pack.generation != null
              ? ` — generation ${pack.generation} keeps serving.`
              : ' — nothing is serving yet: fix it and save.'}
          </span>
          {pack.failure.details?.length > 0 && <pre>{pack.failure.details.join('\n')}</pre>}
        </div>
      )}
      <div className="body">
        <nav>
          {index && <PackList index={index} open={open} onOpen={setOpen} />}
          <HistoryList version={historyVersion} onOpen={(call) => setOpen({ kind: 'tool', id: call.toolId, call })} />
        </nav>
        <main>
          {!open && <p className="muted">Pick a tool, a check, an agent or a flow.</p>}
          {entry && open.kind === 'tool' && (
            <ToolView
              key={`${entry.id}:${open.call?.callId || ''}`}
              tool={entry}
              pack={pack}
              past={open.call}
              onCalled={() => setHistoryVersion((v) => v + 1)}
              onLogs={setLogFilter}
            />
          )}
          {entry && open.kind === 'check' && <CheckView key={entry.id} check={entry} onLogs={setLogFilter} />}
          {entry && open.kind === 'agent' && <AgentView key={entry.id} agent={entry} index={index} onOpen={setOpen} />}
          {entry && open.kind === 'flow' && <FlowView key={entry.id} flow={entry} index={index} onOpen={setOpen} />}
          {open && !entry && index && (
            <p className="error" role="alert">
              This pack has no {open.kind} {open.id} (any more): pick another on the left.
            </p>
          )}
        </main>
      </div>
      <LogsPanel filter={logFilter} onFilter={setLogFilter} />
    </div>
  );
}
