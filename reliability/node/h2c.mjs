// Sends requests over HTTP/2 with prior knowledge (h2c) with Node's own
// http2 module, all at once on one connection, and prints what each got.
//
//   node h2c.mjs URL < requests.json
//
// requests.json: [{"method": "POST", "path": "/v1/invoke",
//   "headers": {...}, "body": "...", "zeros": N, "resetAfterMs": N}, ...]
// (`zeros`: a body of N zero bytes, sent as it is accepted, with no
// content-length; `resetAfterMs`: the stream is reset, RST_STREAM CANCEL,
// after that long).
//
// Prints one JSON line: [{"status": 200, "headers": {...}, "body": "..."}
// or {"error": "CODE"}, ...], in the order of the requests.
import http2 from "node:http2";

const [url] = process.argv.slice(2);
if (!new URL(url).hostname.startsWith("127.")) {
  throw new Error(`only 127.0.0.0/8 is a target, not ${url}`);
}
let input = "";
for await (const chunk of process.stdin) input += chunk;
const requests = JSON.parse(input);

const session = http2.connect(url);
session.on("error", () => {});

function send(request) {
  return new Promise((resolve) => {
    const headers = { ":method": request.method ?? "GET", ":path": request.path };
    Object.assign(headers, request.headers ?? {});
    const stream = session.request(headers);
    let status;
    let answer;
    const chunks = [];
    stream.on("response", (h) => {
      status = h[":status"];
      answer = Object.fromEntries(Object.entries(h).filter(([k]) => !k.startsWith(":")));
    });
    stream.on("data", (c) => chunks.push(c));
    stream.on("end", () =>
      resolve(
        status === undefined
          ? { error: `reset ${stream.rstCode}` }
          : { status, headers: answer, body: Buffer.concat(chunks).toString() },
      ),
    );
    stream.on("error", (e) => resolve({ error: e.code ?? String(e) }));
    stream.on("close", () => {
      if (status === undefined) resolve({ error: `closed ${stream.rstCode}` });
    });
    if (request.resetAfterMs !== undefined) {
      setTimeout(() => stream.close(http2.constants.NGHTTP2_CANCEL), request.resetAfterMs);
    }
    if (request.zeros !== undefined) {
      const chunk = Buffer.alloc(64 * 1024);
      let left = request.zeros;
      const pump = () => {
        while (left > 0) {
          const n = Math.min(left, chunk.length);
          left -= n;
          if (!stream.write(chunk.subarray(0, n))) return stream.once("drain", pump);
        }
        stream.end();
      };
      pump();
    } else {
      stream.end(request.body ?? undefined);
    }
  });
}

const results = await Promise.all(requests.map(send));
session.close();
console.log(JSON.stringify(results));
