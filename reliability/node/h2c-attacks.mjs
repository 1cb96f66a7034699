// HTTP/2 attacks on one h2c connection, each counted by what the service
// answered:
//
//   node h2c-attacks.mjs URL TOKEN ATTACK N
//
// ATTACK: "rapid-reset" (N streams, each reset as soon as it is opened),
// "pings" (N PINGs at once), "settings" (N SETTINGS frames at once),
// "tiny-data" (one invoke whose body comes in N one-byte DATA frames),
// "idle" (one GET /healthz, then nothing: waits up to N ms for the service
// to close the connection), "zero-window" (a connection whose streams'
// flow-control window is 0, so no answer body can reach it: 4 invokes of
// `stress.sleep`, then waits up to N ms for the service to close it).
// Prints one JSON line: {"ms": how long, "goaway": the GOAWAY's error code
// or null, "status": the tiny-data or idle call's status or null,
// "closedMs": for "idle" and "zero-window", ms from the (last) answer's
// head to the close, or null; "statuses": the zero-window calls' statuses,
// "errors": {...}}.
import http2 from "node:http2";

const [url, token, attack, n] = process.argv.slice(2);
if (!new URL(url).hostname.startsWith("127.")) {
  throw new Error(`only 127.0.0.0/8 is a target, not ${url}`);
}
const count = Number(n);
const started = Date.now();
const session = http2.connect(
  url,
  attack === "zero-window" ? { settings: { initialWindowSize: 0 } } : {},
);
let goaway = null;
const errors = {};
session.on("goaway", (code) => (goaway = code));
session.on("error", (e) => (errors[e.code ?? "session"] = (errors[e.code ?? "session"] ?? 0) + 1));
await new Promise((resolve) => session.once("connect", resolve));
const headers = {
  ":method": "POST",
  ":path": "/v1/invoke",
  "kindgi-pack-token": token,
  "content-type": "application/json",
};
let status = null;
let closedMs = null;
let statuses = null;
const closedWithin = (since, ms) =>
  new Promise((resolve) => {
    if (session.closed || session.destroyed) return resolve(Date.now() - since);
    const timer = setTimeout(() => resolve(null), ms);
    session.once("close", () => {
      clearTimeout(timer);
      resolve(Date.now() - since);
    });
  });
if (attack === "idle") {
  status = await new Promise((resolve) => {
    const stream = session.request({ ":path": "/healthz" });
    stream.on("response", (h) => resolve(h[":status"]));
    stream.on("error", (e) => resolve(`error ${e.code}`));
    stream.resume();
  });
  closedMs = await closedWithin(Date.now(), count);
} else if (attack === "zero-window") {
  // The heads of the answers arrive (HEADERS frames are not flow
  // controlled); their bodies never can.
  statuses = await Promise.all(
    Array.from({ length: 4 }, (_, i) =>
      new Promise((resolve) => {
        const body = JSON.stringify({
          v: 2, kind: "invoke", tool: { id: "stress.sleep" }, input: { ms: 1 },
          ctx: { tenantId: "t1", runId: `stalled-${i}` },
        });
        const stream = session.request(headers);
        stream.on("response", (h) => resolve(h[":status"]));
        stream.on("error", (e) => resolve(`error ${e.code}`));
        stream.end(body);
      }),
    ),
  );
  closedMs = await closedWithin(Date.now(), count);
} else if (attack === "rapid-reset") {
  for (let i = 0; i < count && !session.destroyed && !session.closed; i++) {
    try {
      const stream = session.request(headers);
      stream.on("error", (e) => (errors[e.code] = (errors[e.code] ?? 0) + 1));
      stream.close(http2.constants.NGHTTP2_CANCEL);
    } catch (e) {
      errors[e.code] = (errors[e.code] ?? 0) + 1;
      break;
    }
    if (i % 100 === 0) await new Promise((r) => setImmediate(r));
  }
} else if (attack === "pings") {
  await Promise.all(
    Array.from({ length: count }, () => new Promise((r) => session.ping(() => r()))),
  );
} else if (attack === "settings") {
  for (let i = 0; i < count; i++) {
    try {
      session.settings({ initialWindowSize: 65535 + (i % 2) });
    } catch (e) {
      errors[e.code] = (errors[e.code] ?? 0) + 1;
      break;
    }
  }
} else if (attack === "tiny-data") {
  const body = JSON.stringify({
    v: 2, kind: "invoke", tool: { id: "stress.sleep" }, input: { ms: 1 },
    ctx: { tenantId: "t1", runId: "tiny" }, pad: "x".repeat(count),
  });
  status = await new Promise((resolve) => {
    const stream = session.request(headers);
    stream.on("response", (h) => resolve(h[":status"]));
    stream.on("error", (e) => resolve(`error ${e.code}`));
    let i = 0;
    const bytes = Buffer.from(body);
    const pump = () => {
      while (i < bytes.length) {
        if (!stream.write(bytes.subarray(i, i + 1))) {
          i++;
          return stream.once("drain", pump);
        }
        i++;
      }
      stream.end();
    };
    pump();
  });
}
await new Promise((r) => setTimeout(r, 200));
session.destroy();
console.log(
  JSON.stringify({ ms: Date.now() - started, goaway, status, statuses, closedMs, errors }),
);
