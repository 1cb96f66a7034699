// Keeps calling stress.append over HTTP/2 with prior knowledge while the
// service drains: SESSIONS connections, 8 calls in flight on each, until
// COUNT calls were made or the service is gone.
//
//   node h2c-drain.mjs URL TOKEN FILE COUNT SESSIONS
//
// Prints one JSON line: {"call-0": {"status": 200, "body": "..."} or
// {"error": "CODE"}, ...} for every call it sent (ids it never got to
// are left out).
import http2 from "node:http2";

const [url, token, file, count, sessions] = process.argv.slice(2);
if (!new URL(url).hostname.startsWith("127.")) {
  throw new Error(`only 127.0.0.0/8 is a target, not ${url}`);
}
let next = 0;
const seen = {};

function call(session, id) {
  return new Promise((resolve) => {
    let stream;
    try {
      stream = session.request({
        ":method": "POST",
        ":path": "/v1/invoke",
        "kindgi-pack-token": token,
        "content-type": "application/json",
      });
    } catch (e) {
      return resolve({ error: e.code ?? String(e) });
    }
    let status;
    const chunks = [];
    stream.on("response", (h) => (status = h[":status"]));
    stream.on("data", (c) => chunks.push(c));
    stream.on("end", () =>
      resolve(
        status === undefined
          ? { error: `reset ${stream.rstCode}` }
          : { status, body: Buffer.concat(chunks).toString() },
      ),
    );
    stream.on("error", (e) => resolve({ error: e.code ?? String(e) }));
    stream.end(
      JSON.stringify({
        v: 2,
        kind: "invoke",
        tool: { id: "stress.append" },
        input: { path: file, id, ms: 20 },
        ctx: { tenantId: "t1", runId: "h2c-drain" },
      }),
    );
  });
}

async function worker(session) {
  while (next < Number(count) && !session.closed && !session.destroyed) {
    const id = `call-${next++}`;
    seen[id] = await call(session, id);
    if (seen[id].error) return;
  }
}

async function connection() {
  const session = http2.connect(url);
  session.on("error", () => {});
  await Promise.all(Array.from({ length: 8 }, () => worker(session)));
  session.close();
}

await Promise.all(Array.from({ length: Number(sessions) }, connection));
console.log(JSON.stringify(seen));
