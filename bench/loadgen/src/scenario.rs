//! The scenarios: what each sends, how hard, and the answer it expects.

use bytes::Bytes;
use serde_json::{Value, json};

use crate::load::Protocol;

/// One MiB: the size of the bulk scenario's request body.
pub(crate) const MIB: usize = 1024 * 1024;

/// The 1 MiB scenario of a valid input.
pub(crate) const BULK: &str = "bulk 1 MiB c=1";
/// The 1 MiB scenario of an input with one wrong value.
pub(crate) const BULK_INVALID: &str = "bulk invalid 1 MiB c=1";

/// Echo at c=64 over h2c, every stream on one connection.
pub(crate) const H2C_ONE: &str = "echo h2c c=64, 1 connection";
/// Echo at c=64 over h2c, the streams spread over 8 connections.
pub(crate) const H2C_EIGHT: &str = "echo h2c c=64, 8 connections";

/// Which service of a target a scenario runs against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Pack {
    /// The conformance fixture pack (`conformance.echo`, the min-length check).
    Fixture,
    /// The bench pack (`bench.bulk`).
    Bulk,
}

/// The answer a correct target gives to a scenario's request.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Expect {
    /// This answer, as JSON (key order aside).
    Answer(Value),
    /// The input refused with `code`, its first issue at `instance_path`
    /// (each service words its messages its own way).
    Refused {
        /// The error's `code`.
        code: &'static str,
        /// The first issue's `instancePath`.
        instance_path: String,
    },
}

impl Expect {
    /// Whether `answer` is what a correct target answers.
    pub(crate) fn matches(&self, answer: &Value) -> bool {
        match self {
            Self::Answer(expected) => answer == expected,
            Self::Refused {
                code,
                instance_path,
            } => answer["code"] == *code && answer["issues"][0]["instancePath"] == **instance_path,
        }
    }
}

impl std::fmt::Display for Expect {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Answer(expected) => write!(f, "{expected}"),
            Self::Refused {
                code,
                instance_path,
            } => write!(f, "{code} with an issue at {instance_path}"),
        }
    }
}

/// A scenario: a request sent over and over by `concurrency` senders.
#[derive(Debug, Clone)]
pub(crate) struct Scenario {
    /// Its name in the report.
    pub(crate) name: &'static str,
    /// The request body.
    pub(crate) body: Bytes,
    /// The answer a correct target gives.
    pub(crate) expect: Expect,
    /// Senders, one request in flight on each.
    pub(crate) concurrency: usize,
    /// HTTP/1.1 (a connection per sender) or h2c.
    pub(crate) protocol: Protocol,
    /// Which pack answers it.
    pub(crate) pack: Pack,
    /// Whether its throughput is reported in MB/s of request body.
    pub(crate) bulk: bool,
}

/// The invoke of `conformance.echo` with `{"message":"hi"}`.
pub(crate) fn echo_body() -> Bytes {
    Bytes::from_static(
        br#"{"v":2,"kind":"invoke","tool":{"id":"conformance.echo"},"input":{"message":"hi"},"ctx":{"tenantId":"t","runId":"r"}}"#,
    )
}

/// The check invoke of `conformance.checks.min-length`.
pub(crate) fn check_body() -> Bytes {
    Bytes::from_static(
        br#"{"v":2,"kind":"check-invoke","check":{"id":"conformance.checks.min-length"},"config":{"minLength":3},"trace":{"runId":"r","tenantId":"t","output":"hello world"}}"#,
    )
}

/// A small deterministic generator (xorshift), so every run sends the same
/// megabyte.
#[derive(Debug)]
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

const WORDS: [&str; 12] = [
    "parcel",
    "invoice",
    "delivery",
    "customer",
    "warehouse",
    "refund",
    "carrier",
    "priority",
    "address",
    "signature",
    "pallet",
    "receipt",
];
const STATUSES: [&str; 4] = ["open", "paid", "shipped", "cancelled"];

/// The `bench.bulk` invoke: a batch of orders whose body is exactly `size`
/// bytes, and the output the tool answers for it.
///
/// About 800 orders of 9 fields, each with 12–20 lines of 3 fields: some
/// 60 000 values, every one under a schema keyword.
pub(crate) fn bulk_body(size: usize) -> (Bytes, Value) {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let head = r#"{"v":2,"kind":"invoke","tool":{"id":"bench.bulk"},"ctx":{"tenantId":"t","runId":"r"},"input":{"orders":["#;
    let tail = "]}}";
    let mut orders: Vec<String> = Vec::new();
    let mut total = head.len() + tail.len();
    let (mut lines_total, mut quantity_total) = (0u64, 0u64);
    loop {
        let mut quantity = 0;
        let lines: Vec<String> = (0..12 + rng.below(9))
            .map(|l| {
                let q = 1 + rng.below(500);
                quantity += q;
                format!(
                    r#"{{"sku":"SKU-{:05}-{l:02}","quantity":{q},"unitPrice":{}.{:02}}}"#,
                    rng.below(100_000),
                    rng.below(1000),
                    rng.below(100)
                )
            })
            .collect();
        let tags: Vec<String> = (0..rng.below(5))
            .map(|_| format!("\"{}\"", WORDS[rng.below(12) as usize]))
            .collect();
        let note: Vec<&str> = (0..20 + rng.below(20))
            .map(|_| WORDS[rng.below(12) as usize])
            .collect();
        let order = format!(
            r#"{{"id":"order-{:06}","customer":"customer {}","status":"{}","priority":{},"paid":{},"total":{}.{:02},"tags":[{}],"lines":[{}],"note":"{}"}}"#,
            orders.len(),
            rng.below(10_000),
            STATUSES[rng.below(4) as usize],
            rng.below(10),
            rng.below(2) == 0,
            rng.below(100_000),
            rng.below(100),
            tags.join(","),
            lines.join(","),
            note.join(" ")
        );
        let grown = total + order.len() + usize::from(!orders.is_empty());
        if grown > size && !orders.is_empty() {
            break;
        }
        total = grown;
        lines_total += lines.len() as u64;
        quantity_total += quantity;
        orders.push(order);
    }
    // Lengthen the last order's note so the body is exactly `size` bytes.
    if let Some(last) = orders.last_mut() {
        let note_end = last.len() - 2;
        let filler: String = " and so on"
            .chars()
            .cycle()
            .take(size.saturating_sub(total))
            .collect();
        last.insert_str(note_end, &filler);
    }
    let body = format!("{head}{}{tail}", orders.join(","));
    let expect = json!({
        "v": 2,
        "kind": "result",
        "output": {"orders": orders.len(), "lines": lines_total, "quantity": quantity_total}
    });
    (Bytes::from(body), expect)
}

/// The `bench.bulk` invoke of [`bulk_body`], `size` bytes, with one wrong
/// value in its last order (`priority` 10, past the schema's maximum of 9):
/// a service checks the whole megabyte before it finds it. Returns the body
/// and the wrong value's `instancePath`.
pub(crate) fn bulk_invalid_body(size: usize) -> (Bytes, String) {
    let (body, expect) = bulk_body(size - 1);
    let text = String::from_utf8_lossy(&body).into_owned();
    let at = text
        .rfind(r#""priority":"#)
        .map(|i| i + r#""priority":"#.len());
    let Some(at) = at else {
        unreachable!("every order has a priority");
    };
    // One digit (0–9) becomes two: the body grows to `size`.
    let wrong = format!("{}10{}", &text[..at], &text[at + 1..]);
    let last = expect["output"]["orders"]
        .as_u64()
        .unwrap_or(1)
        .saturating_sub(1);
    (Bytes::from(wrong), format!("/orders/{last}/priority"))
}

/// Every scenario, in report order.
pub(crate) fn all() -> Vec<Scenario> {
    let echo_expect =
        Expect::Answer(json!({"v": 2, "kind": "result", "output": {"message": "hi"}}));
    let echo = |name, concurrency, protocol| Scenario {
        name,
        body: echo_body(),
        expect: echo_expect.clone(),
        concurrency,
        protocol,
        pack: Pack::Fixture,
        bulk: false,
    };
    let (bulk, bulk_expect) = bulk_body(MIB);
    let (invalid, instance_path) = bulk_invalid_body(MIB);
    vec![
        echo("echo c=1", 1, Protocol::Http1),
        echo("echo c=16", 16, Protocol::Http1),
        echo("echo c=64", 64, Protocol::Http1),
        echo(H2C_ONE, 64, Protocol::H2c { connections: 1 }),
        echo(H2C_EIGHT, 64, Protocol::H2c { connections: 8 }),
        Scenario {
            name: "check c=16",
            body: check_body(),
            expect: Expect::Answer(
                json!({"v": 2, "kind": "check-result", "result": {"passed": true}}),
            ),
            concurrency: 16,
            protocol: Protocol::Http1,
            pack: Pack::Fixture,
            bulk: false,
        },
        Scenario {
            name: BULK,
            body: bulk,
            expect: Expect::Answer(bulk_expect),
            concurrency: 1,
            protocol: Protocol::Http1,
            pack: Pack::Bulk,
            bulk: true,
        },
        Scenario {
            name: BULK_INVALID,
            body: invalid,
            expect: Expect::Refused {
                code: "input-validation-failed",
                instance_path,
            },
            concurrency: 1,
            protocol: Protocol::Http1,
            pack: Pack::Bulk,
            bulk: true,
        },
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bulk_body_is_exactly_the_size_and_valid_json() {
        let (body, expect) = bulk_body(MIB);
        assert_eq!(body.len(), MIB);
        let parsed: Value = serde_json::from_slice(&body).expect("valid JSON");
        let orders = parsed["input"]["orders"].as_array().expect("orders");
        assert_eq!(expect["output"]["orders"], orders.len());
        assert!(
            (600..1000).contains(&orders.len()),
            "{} orders",
            orders.len()
        );
        let lines: usize = orders
            .iter()
            .map(|o| o["lines"].as_array().map_or(0, Vec::len))
            .sum();
        assert_eq!(expect["output"]["lines"], lines);
    }

    #[test]
    fn the_invalid_bulk_body_is_the_size_with_one_wrong_value() {
        let (body, path) = bulk_invalid_body(MIB);
        assert_eq!(body.len(), MIB);
        let parsed: Value = serde_json::from_slice(&body).expect("valid JSON");
        let orders = parsed["input"]["orders"].as_array().expect("orders");
        assert_eq!(path, format!("/orders/{}/priority", orders.len() - 1));
        assert_eq!(orders[orders.len() - 1]["priority"], 10);
        assert!(
            orders[..orders.len() - 1]
                .iter()
                .all(|o| o["priority"].as_u64() < Some(10))
        );
    }

    #[test]
    fn a_refusal_matches_by_code_and_path() {
        let expect = Expect::Refused {
            code: "input-validation-failed",
            instance_path: "/orders/3/priority".to_owned(),
        };
        let answer = json!({"v": 2, "code": "input-validation-failed", "message": "m",
            "issues": [{"instancePath": "/orders/3/priority", "message": "must be <= 9"}]});
        assert!(expect.matches(&answer));
        let elsewhere = json!({"v": 2, "code": "input-validation-failed",
            "issues": [{"instancePath": "/orders/2/priority"}]});
        assert!(!expect.matches(&elsewhere));
        assert!(!expect.matches(&json!({"v": 2, "kind": "result"})));
    }

    #[test]
    fn bulk_body_is_the_same_every_time() {
        assert_eq!(bulk_body(MIB).0, bulk_body(MIB).0);
    }

    #[test]
    fn small_bodies_are_json() {
        for body in [echo_body(), check_body()] {
            assert!(serde_json::from_slice::<Value>(&body).is_ok());
        }
    }
}
