//! What one service does with one probe: its answer (status, the headers
//! the contract names, body) and the records of the probe's run, with what
//! differs on every run (times, durations, ports, fresh span ids, stack
//! traces) put in words, so that two observations compare exactly.

use std::collections::BTreeMap;
use std::ops::Range;
use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};

use super::corpus::{self, Act, Auth, Probe, Request};
use crate::harness::Service;
use crate::http::{self, Connection, HttpRequest, Outcome};

/// The headers the contract names, compared on every answer.
pub(crate) const NAMED_HEADERS: [&str; 4] = [
    "content-type",
    "retry-after",
    "kindgi-duration-ms",
    "kindgi-artifact-version",
];

/// How long an answer or a record that should come soon may take.
const SOON: Duration = Duration::from_secs(10);

/// One service's answer to one probe, normalized.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Observation {
    /// The status, or `None` when no answer came (or none was read).
    pub(crate) status: Option<u16>,
    /// The named headers that were present.
    pub(crate) headers: BTreeMap<&'static str, String>,
    /// The body: its JSON, or its text as a string when it isn't JSON.
    pub(crate) body: Value,
    /// The records of the probe's run, in the order written.
    pub(crate) records: Vec<Value>,
}

impl Observation {
    /// An observation of records alone (no request was made).
    pub(crate) fn records_only(records: Vec<Value>) -> Self {
        Self {
            status: None,
            headers: BTreeMap::new(),
            body: Value::Null,
            records,
        }
    }
}

/// Sends `probe` (number `n`) to `service`, then its fence; returns what
/// it answered and the window of records written before the fence's
/// `call` record. `work` is a folder for the files a probe needs.
///
/// # Errors
///
/// When the probe couldn't be sent at all, or the fence wasn't answered
/// and logged.
pub(crate) async fn send_fenced(
    service: &Service,
    probe: &Probe,
    n: usize,
    work: &Path,
) -> Result<(Observation, Range<usize>), String> {
    let start = service.output().records().len();
    let observation = send(service, probe, work).await?;
    let (run, request) = corpus::fence(n);
    let request = build(service, &request);
    let outcome = http::exchange(service.addr(), &request, request.time_limit()).await;
    if outcome.status() != Some(200) {
        return Err(format!("the fence after it: {outcome}"));
    }
    if !wait_for_call(service, &run).await {
        return Err(format!("the fence after it ({run}) wrote no call record"));
    }
    let run = Value::from(run);
    let end = service
        .output()
        .records()
        .iter()
        .position(|r| r.get("runId") == Some(&run))
        .unwrap_or(start);
    Ok((observation, start..end.max(start)))
}

/// Sends `probe` to `service` and reads its answer.
async fn send(service: &Service, probe: &Probe, work: &Path) -> Result<Observation, String> {
    match &probe.act {
        Act::Send(request) => {
            let request = build(service, request);
            let outcome = http::exchange(service.addr(), &request, request.time_limit()).await;
            Ok(answered(&outcome))
        }
        Act::Disconnect => disconnect(service, probe, work).await,
        Act::HalfClose(request) => half_close(service, &build(service, request)).await,
    }
}

/// The request as written to `service`, with its token.
fn build(service: &Service, request: &Request) -> HttpRequest {
    let mut built = HttpRequest::new(request.method, request.path).timeout(SOON);
    built = match request.auth {
        Auth::Good => service.authed(built),
        Auth::Missing => built,
        Auth::Wrong => built.header("kindgi-pack-token", "not-the-token"),
    };
    if let Some(content_type) = request.content_type {
        built = built.header("content-type", content_type);
    }
    for (name, value) in &request.headers {
        built = built.header(name, value);
    }
    built.body(request.body.clone())
}

/// The observation of an exchange's outcome (records come later).
pub(crate) fn answered(outcome: &Outcome) -> Observation {
    let Some(response) = outcome.response() else {
        return Observation {
            status: None,
            headers: BTreeMap::new(),
            body: Value::Null,
            records: Vec::new(),
        };
    };
    let mut headers = BTreeMap::new();
    for name in NAMED_HEADERS {
        if let Some(value) = response.header(name) {
            let value = if name == "kindgi-duration-ms" && value.parse::<u64>().is_ok() {
                "<integer>".to_owned()
            } else {
                value.to_owned()
            };
            headers.insert(name, value);
        }
    }
    let mut body = response
        .json()
        .unwrap_or_else(|_| Value::String(response.text()));
    normalize_body(&mut body);
    Observation {
        status: Some(response.status),
        headers,
        body,
        records: Vec::new(),
    }
}

/// A `conformance.hold` call whose caller closes the connection once the
/// handler prints that it runs.
async fn disconnect(service: &Service, probe: &Probe, work: &Path) -> Result<Observation, String> {
    let release = work.join(format!("release-{}-{}", probe.id, service.addr().port()));
    let release = release.to_string_lossy().into_owned();
    let message = json!({"v": 2, "kind": "invoke", "tool": {"id": "conformance.hold"},
        "input": {"release": release}, "ctx": {"tenantId": "t1", "runId": probe.run}});
    let request = service.authed(
        HttpRequest::post("/v1/invoke")
            .header("content-type", "application/json")
            .json(&message),
    );
    let mut connection = Connection::open(service.addr())
        .await
        .map_err(|e| format!("cannot connect: {e}"))?;
    connection
        .send(&request.to_bytes())
        .await
        .map_err(|e| format!("cannot send: {e}"))?;
    let line = format!("hold: {release}");
    let started = service
        .output()
        .wait_for_stdout(|l| l.contains(&line), SOON)
        .await;
    drop(connection);
    // The handler is released only once its call has ended (or never
    // will), so that the call can only end by the caller going away.
    let logged = started.is_some() && wait_for_call(service, &probe.run).await;
    let _ = std::fs::write(&release, b"");
    if started.is_none() {
        return Err(format!("the handler never printed {line:?}"));
    }
    if !logged {
        return Err("no call record after the caller went away".to_owned());
    }
    Ok(Observation {
        status: None,
        headers: BTreeMap::new(),
        body: Value::Null,
        records: Vec::new(),
    })
}

/// Sends `request`, at once closes the sending side, and reads its answer,
/// if one comes.
async fn half_close(service: &Service, request: &HttpRequest) -> Result<Observation, String> {
    let mut connection = Connection::open(service.addr())
        .await
        .map_err(|e| format!("cannot connect: {e}"))?;
    connection
        .send(&request.to_bytes())
        .await
        .map_err(|e| format!("cannot send: {e}"))?;
    connection
        .half_close()
        .await
        .map_err(|e| format!("cannot half-close: {e}"))?;
    Ok(
        match tokio::time::timeout(SOON, connection.read_response()).await {
            Ok(Ok(response)) => answered(&Outcome::Answered(response)),
            Ok(Err(e)) => answered(&Outcome::NoAnswer(e.to_string())),
            Err(_) => answered(&Outcome::NoAnswer("no answer in time".to_owned())),
        },
    )
}

/// Waits for the `call` record of run `run`.
async fn wait_for_call(service: &Service, run: &str) -> bool {
    let run = Value::from(run);
    service
        .output()
        .wait_for_record(
            |r| r.get("runId") == Some(&run) && r.get("kind") == Some(&Value::from("call")),
            SOON,
        )
        .await
        .is_some()
}

/// The records of `probe`, normalized, in the order written: those of its
/// run, and those of no run written in its `window`.
pub(crate) fn records_of(records: &[Value], probe: &Probe, window: &Range<usize>) -> Vec<Value> {
    let run = Value::from(probe.run.as_str());
    records
        .iter()
        .enumerate()
        .filter(|(i, r)| match r.get("runId") {
            Some(id) => *id == run,
            None => window.contains(i),
        })
        .map(|(_, r)| normalize_record(r.clone()))
        .collect()
}

/// The records written before the `listening` one, and it, normalized.
pub(crate) fn boot_records(records: &[Value]) -> Vec<Value> {
    let mut boot = Vec::new();
    for record in records {
        boot.push(normalize_record(record.clone()));
        if record.get("kind") == Some(&Value::from("listening")) {
            break;
        }
    }
    boot
}

/// The records that belong to no run and no probe's window, after the
/// `listening` one: what the service writes about itself while serving and
/// stopping.
pub(crate) fn process_records(records: &[Value], windows: &[Range<usize>]) -> Vec<Value> {
    records
        .iter()
        .enumerate()
        .skip(after_listening(records))
        .filter(|(i, r)| r.get("runId").is_none() && !windows.iter().any(|w| w.contains(i)))
        .map(|(_, r)| normalize_record(r.clone()))
        .collect()
}

/// Where the records after the `listening` one start (0 without one).
pub(crate) fn after_listening(records: &[Value]) -> usize {
    records
        .iter()
        .position(|r| r.get("kind") == Some(&Value::from("listening")))
        .map_or(0, |at| at + 1)
}

/// Stops `service` with SIGTERM (killed after `grace`) and returns every
/// record it wrote, its `stopped` one waited for.
pub(crate) async fn stopped(service: &Service, grace: Duration) -> Vec<Value> {
    service.stop(grace).await;
    let output = service.output();
    let _ = output
        .wait_for_record(|r| r.get("kind") == Some(&Value::from("stopped")), grace)
        .await;
    output.records()
}

/// A record with what differs on every run put in words: `time`, the
/// `durationMs` / `afterMs` / `port` figures (and the message that says
/// them), a fresh `spanId`.
pub(crate) fn normalize_record(mut record: Value) -> Value {
    let Value::Object(map) = &mut record else {
        return record;
    };
    map.remove("time");
    for (field, unit) in [("durationMs", "ms"), ("afterMs", " ms"), ("port", "")] {
        let Some(figure) = map.get(field).and_then(Value::as_u64) else {
            continue;
        };
        map.insert(field.to_owned(), Value::from(format!("<{field}>")));
        if let Some(Value::String(message)) = map.get_mut("message") {
            let said = format!("{figure}{unit}");
            if let Some(at) = message.rfind(&said) {
                message.replace_range(at..at + said.len(), &format!("<{field}>{unit}"));
            }
        }
    }
    if map.get("spanId").is_some_and(Value::is_string) {
        map.insert("spanId".to_owned(), Value::from("<fresh>"));
    }
    record
}

/// A body with a thrown error's stack trace put in words: it names the
/// service's own files and lines.
fn normalize_body(body: &mut Value) {
    if let Some(Value::Object(cause)) = body.get_mut("cause")
        && cause.get("stack").is_some_and(Value::is_string)
    {
        cause.insert("stack".to_owned(), Value::from("<stack>"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_record_loses_its_time_and_figures() {
        let record = json!({"time": "2026-01-01T00:00:00.000Z", "kind": "call",
            "message": "tool conformance.echo ok 12ms", "durationMs": 12,
            "spanId": "0123456789abcdef", "traceId": "0af7651916cd43dd8448eb211c80319c"});
        assert_eq!(
            normalize_record(record),
            json!({"kind": "call", "message": "tool conformance.echo ok <durationMs>ms",
                "durationMs": "<durationMs>", "spanId": "<fresh>",
                "traceId": "0af7651916cd43dd8448eb211c80319c"})
        );
        let listening = json!({"message": "Listening on port 41234", "port": 41234});
        assert_eq!(
            normalize_record(listening),
            json!({"message": "Listening on port <port>", "port": "<port>"})
        );
        let late = json!({"message": "tool conformance.sleep finished 7 ms after its call ended", "afterMs": 7});
        assert_eq!(
            normalize_record(late)["message"],
            "tool conformance.sleep finished <afterMs> ms after its call ended"
        );
    }

    #[test]
    fn a_stack_is_put_in_words() {
        let mut body = json!({"cause": {"name": "Error", "message": "boom", "stack": "Error: boom\n  at x.js:1"}});
        normalize_body(&mut body);
        assert_eq!(body["cause"]["stack"], "<stack>");
    }
}
