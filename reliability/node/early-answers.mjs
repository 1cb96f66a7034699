// Posts a large body with Node's own fetch (undici) and counts how each
// call ended: the status it saw, or the error it got instead.
//
//   node early-answers.mjs URL TOKEN CONTENT_TYPE BYTES TRIES
//
// Prints one JSON line: {"statuses": {"413": 20}, "errors": {}}.
// Every request goes to URL, which the test points at 127.0.0.1.

const [url, token, contentType, bytes, tries] = process.argv.slice(2);
if (!new URL(url).hostname.startsWith("127.")) {
  throw new Error(`only 127.0.0.0/8 is a target, not ${url}`);
}
const body = new Uint8Array(Number(bytes)).fill(0x20);
const statuses = {};
const errors = {};
for (let i = 0; i < Number(tries); i++) {
  try {
    const response = await fetch(url, {
      method: "POST",
      headers: { "kindgi-pack-token": token, "content-type": contentType },
      body,
      signal: AbortSignal.timeout(20000),
    });
    await response.arrayBuffer();
    statuses[response.status] = (statuses[response.status] ?? 0) + 1;
  } catch (error) {
    const code = error?.cause?.code ?? error?.cause?.name ?? error?.name ?? String(error);
    errors[code] = (errors[code] ?? 0) + 1;
  }
}
console.log(JSON.stringify({ statuses, errors }));
