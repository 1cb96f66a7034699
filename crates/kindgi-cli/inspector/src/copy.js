// A call as a command to paste: `kindgi call …` or curl. The service token
// is never in the page: the lines read it from $KINDGI_SERVICE_TOKEN.

function quote(word) {
  const text = String(word);
  if (/^[A-Za-z0-9_./:=@,+-]+$/.test(text)) return text;
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

/** `kindgi call …` for the call `outcome` made. */
export function asKindgiCall(outcome, pack) {
  const call = outcome.call || {};
  const ctx = call.ctx || {};
  const words = ['kindgi', 'call', outcome.toolId, '--service', pack.serviceUrl, '--token', '"$KINDGI_SERVICE_TOKEN"'];
  if (pack.indexPath) words.push('--index', quote(pack.indexPath));
  words.push('--tenant', quote(ctx.tenantId), '--run', quote(ctx.runId));
  if (ctx.projectId) words.push('--project', quote(ctx.projectId));
  if (call.step) words.push('--step', quote(call.step));
  if (call.modelCallId) words.push('--model-call-id', quote(call.modelCallId));
  for (const [name, value] of Object.entries(ctx.env || {})) words.push('--env', quote(`${name}=${value}`));
  for (const name of Object.keys(ctx.secrets || {})) words.push('--secret', `${name}="$${name}"`);
  for (const [id, values] of Object.entries(ctx.settings || {}))
    words.push('--settings', quote(`${id}=${JSON.stringify(values)}`));
  if (call.timeoutMs && call.timeoutMs !== 120000) words.push('--timeout-ms', String(call.timeoutMs));
  words.push('--input', quote(JSON.stringify(call.input ?? {})));
  return words.join(' ');
}

/** curl for the invoke `outcome` sent (without the inspector's grants). */
export function asCurl(outcome) {
  const request = outcome.request;
  const body = JSON.parse(JSON.stringify(request.body));
  if (body.ctx) {
    delete body.ctx.toolFiles;
    delete body.ctx.waitToken;
  }
  const words = ['curl', '-s', quote(request.url), '-H', '"kindgi-pack-token: $KINDGI_SERVICE_TOKEN"'];
  for (const [name, value] of Object.entries(request.headers)) {
    if (name !== 'kindgi-pack-token') words.push('-H', quote(`${name}: ${value}`));
  }
  words.push('-d', quote(JSON.stringify(body)));
  return words.join(' ');
}
