//! The scenarios: what each sends, how hard, and the answer it expects.

use bytes::Bytes;
use serde_json::{Value, json};

/// One MiB: the size of the bulk scenario's request body.
pub(crate) const MIB: usize = 1024 * 1024;

/// Which service of a target a scenario runs against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Pack {
    /// The conformance fixture pack (`conformance.echo`, the min-length check).
    Fixture,
    /// The bench pack (`bench.bulk`).
    Bulk,
}

/// A scenario: a request sent over and over by `concurrency` connections.
#[derive(Debug, Clone)]
pub(crate) struct Scenario {
    /// Its name in the report.
    pub(crate) name: &'static str,
    /// The request body.
    pub(crate) body: Bytes,
    /// The answer a correct target gives, as JSON (key order aside).
    pub(crate) expect: Value,
    /// Connections, one request in flight on each.
    pub(crate) concurrency: usize,
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

/// Every scenario, in report order.
pub(crate) fn all() -> Vec<Scenario> {
    let echo_expect = json!({"v": 2, "kind": "result", "output": {"message": "hi"}});
    let echo = |name, concurrency| Scenario {
        name,
        body: echo_body(),
        expect: echo_expect.clone(),
        concurrency,
        pack: Pack::Fixture,
        bulk: false,
    };
    let (bulk, bulk_expect) = bulk_body(MIB);
    vec![
        echo("echo c=1", 1),
        echo("echo c=16", 16),
        echo("echo c=64", 64),
        Scenario {
            name: "check c=16",
            body: check_body(),
            expect: json!({"v": 2, "kind": "check-result", "result": {"passed": true}}),
            concurrency: 16,
            pack: Pack::Fixture,
            bulk: false,
        },
        Scenario {
            name: "bulk 1 MiB c=1",
            body: bulk,
            expect: bulk_expect,
            concurrency: 1,
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
