// The call's context, as a runtime would send it: who (tenant, project,
// org), which run and step (they name the idempotency key), and the env,
// secrets, connections and settings the tool gets.

function newRun() {
  return `run_${crypto.randomUUID().replace(/-/g, '').slice(0, 12)}`;
}

function lines(map) {
  return Object.entries(map || {})
    .map(([k, v]) => `${k}=${v}`)
    .join('\n');
}

function parseLines(text) {
  const out = {};
  for (const line of (text || '').split('\n')) {
    const at = line.indexOf('=');
    if (at > 0) out[line.slice(0, at).trim()] = line.slice(at + 1);
  }
  return out;
}

function parseJson(text) {
  if (!text || !text.trim()) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The panel's starting values: the dev files' env values, a new run. */
export function initialContext(pack, tool, past) {
  const declared = Object.keys(tool.needsSpec?.env || {});
  const env = Object.fromEntries(
    Object.entries(pack.defaults?.env || {}).filter(([name]) => declared.includes(name)),
  );
  const ctx = past?.ctx || {};
  return {
    tenantId: ctx.tenantId || 'dev-tenant',
    runId: ctx.runId || newRun(),
    step: past?.step || 'inspector',
    modelCallId: past?.modelCallId || '',
    projectId: ctx.projectId ?? 'dev-project',
    orgId: ctx.orgId || '',
    env: lines(ctx.env || env),
    secrets: lines(ctx.secrets),
    connections: ctx.connections ? JSON.stringify(ctx.connections, null, 2) : '',
    settings: ctx.settings ? JSON.stringify(ctx.settings, null, 2) : '',
    timeoutMs: past?.timeoutMs || 120000,
    fixedKey: '',
  };
}

/** The panel's values as a call's `ctx` (the inspector adds the key and grants). */
export function contextOf(c) {
  const ctx = { tenantId: c.tenantId, runId: c.runId };
  if (c.projectId) ctx.projectId = c.projectId;
  if (c.orgId) ctx.orgId = c.orgId;
  if (c.modelCallId) ctx.requestId = c.modelCallId;
  const env = parseLines(c.env);
  if (Object.keys(env).length) ctx.env = env;
  const secrets = parseLines(c.secrets);
  if (Object.keys(secrets).length) ctx.secrets = secrets;
  const connections = parseJson(c.connections);
  if (connections) ctx.connections = connections;
  const settings = parseJson(c.settings);
  if (settings) ctx.settings = settings;
  return ctx;
}

function Field({ label, name, value, onChange, ...rest }) {
  return (
    <label className="ctx-field">
      <span>{label}</span>
      <input name={name} value={value} onChange={(e) => onChange(e.target.value)} {...rest} />
    </label>
  );
}

function Area({ label, name, value, onChange, placeholder }) {
  return (
    <label className="ctx-field">
      <span>{label}</span>
      <textarea name={name} rows={2} value={value} placeholder={placeholder} onChange={(e) => onChange(e.target.value)} />
    </label>
  );
}

/** The context panel of one tool's calls. */
export default function ContextPanel({ tool, pack, ctx, onChange, idempotencyKey }) {
  const set = (name) => (value) => onChange({ ...ctx, [name]: value });
  const spec = tool.needsSpec || {};
  const added = (group, file) => {
    const names = (pack.defaults?.[group] || []).filter((n) => spec[group] && n in spec[group]);
    return names.length ? `kindgi dev adds ${names.join(', ')} from ${file} unless given here` : '';
  };
  return (
    <section className="context">
      <h3>Context</h3>
      <Field label="tenant" name="tenantId" value={ctx.tenantId} onChange={set('tenantId')} />
      <div className="row">
        <Field label="run" name="runId" value={ctx.runId} onChange={set('runId')} />
        <button type="button" className="link" onClick={() => onChange({ ...ctx, runId: newRun(), fixedKey: '' })}>
          new run
        </button>
      </div>
      <Field label="step" name="step" value={ctx.step} onChange={set('step')} />
      <Field label="model call id" name="modelCallId" value={ctx.modelCallId} onChange={set('modelCallId')} />
      <Field label="project" name="projectId" value={ctx.projectId} onChange={set('projectId')} />
      <Field label="org" name="orgId" value={ctx.orgId} onChange={set('orgId')} />
      <Area label="env (NAME=VALUE)" name="env" value={ctx.env} onChange={set('env')} />
      <Area
        label="secrets (NAME=VALUE)"
        name="secrets"
        value={ctx.secrets}
        onChange={set('secrets')}
        placeholder={added('secrets', pack.defaults?.secretsFile || '.kindgi/secrets.env')}
      />
      <Area
        label="connections (JSON)"
        name="connections"
        value={ctx.connections}
        onChange={set('connections')}
        placeholder={added('connections', pack.defaults?.connectionsFile || '.kindgi/connections.env')}
      />
      <Area label="settings (JSON)" name="settings" value={ctx.settings} onChange={set('settings')} />
      <Field label="timeout (ms)" name="timeoutMs" value={ctx.timeoutMs} onChange={set('timeoutMs')} />
      <p className="key">
        idempotency key: <code data-key>{idempotencyKey || '—'}</code>
      </p>
    </section>
  );
}
