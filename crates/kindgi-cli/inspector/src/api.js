// The inspector's API: every route wants the dev token, which the page
// reads from its URL's fragment (#token=…): a fragment never reaches a
// server or a log.

const fromHash = new URLSearchParams(window.location.hash.slice(1)).get('token');
if (fromHash) sessionStorage.setItem('kindgi-inspector-token', fromHash);
const token = fromHash || sessionStorage.getItem('kindgi-inspector-token') || '';

/** An answer other than 2xx, with the server's words. */
export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

function authorized(extra = {}) {
  return { Authorization: `Bearer ${token}`, ...extra };
}

/** GET (no body) or POST (a JSON body) to /inspector/api/<path>. */
export async function api(path, body) {
  const post = body !== undefined;
  const response = await fetch(`/inspector/api/${path}`, {
    method: post ? 'POST' : 'GET',
    headers: authorized(post ? { 'content-type': 'application/json' } : {}),
    body: post ? JSON.stringify(body) : undefined,
  });
  const data = await response.json().catch(() => null);
  if (!response.ok) throw new ApiError(response.status, data?.error || response.statusText);
  return data;
}

/** A stored file's bytes, read as a call of its run reads them. */
export async function fileBytes(artifactId, runId, tenantId) {
  const query = new URLSearchParams({ runId, tenantId });
  const response = await fetch(`/inspector/api/files/${encodeURIComponent(artifactId)}?${query}`, {
    headers: authorized(),
  });
  if (!response.ok) {
    const data = await response.json().catch(() => null);
    throw new ApiError(response.status, data?.error || response.statusText);
  }
  return response.arrayBuffer();
}

/** Calls onRecord with each log record of the service, as they come. */
export async function streamLogs(onRecord, signal) {
  const response = await fetch('/inspector/api/logs', { headers: authorized(), signal });
  if (!response.ok || !response.body) throw new ApiError(response.status, 'The log stream was refused');
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let pending = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    pending += value;
    let end;
    while ((end = pending.indexOf('\n\n')) >= 0) {
      const event = pending.slice(0, end);
      pending = pending.slice(end + 2);
      const data = event
        .split('\n')
        .filter((line) => line.startsWith('data: '))
        .map((line) => line.slice(6))
        .join('\n');
      if (data) {
        try {
          onRecord(JSON.parse(data));
        } catch {
          // A record that isn't JSON is skipped.
        }
      }
    }
  }
}
