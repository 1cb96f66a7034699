//! An `f32` field's schema bounds it to the finite range: a number that
//! serde would read as an infinity is refused, on the
//! text read (over HTTP) and on the tree read (`TestPack`) alike, and both
//! hand the handler the number the schema checked, narrowed alike. Issues
//! under odd map keys name their value; a value its schema passes and its
//! type's `Deserialize` refuses is refused at its own pointer, and an
//! integer map key out of its type's range by the schema. An integer past
//! 2^53 − 1 reaches a handler as JavaScript reads it.

mod common;

use kindgi::protocol::ErrorCode;
use kindgi::testing::{TestContext, TestPack};
use kindgi::{Pack, Tool, ToolContext, ToolError};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

const TOKEN: &str = "floats-token-0123456789";

#[derive(Deserialize, JsonSchema)]
struct Scale {
    factor: f32,
}

async fn scale(input: Scale, _ctx: ToolContext) -> Result<Value, ToolError> {
    Ok(json!({"factor": input.factor, "finite": input.factor.is_finite()}))
}

fn pack() -> Pack {
    Pack::new().tool(
        Tool::new("acme.scale")
            .description("Scales.")
            .handler(scale),
    )
}

/// The first issue of an `input-validation-failed` answer, as JSON.
fn first_issue(answer: &Value) -> Value {
    assert_eq!(answer["code"], "input-validation-failed", "{answer}");
    answer["issues"][0].clone()
}

/// The first issue of a call of `tool` with `input`, refused over HTTP and
/// through `TestPack`.
async fn first_issues(
    served: &common::Served,
    tested: &TestPack,
    tool: &str,
    input: &Value,
) -> [Value; 2] {
    let over_http = served.invoke(tool, input.clone(), None).await;
    let in_tests = tested.call(tool, input.clone(), TestContext::new()).await;
    let in_tests = serde_json::to_value(in_tests.error().expect("refused")).expect("JSON");
    [first_issue(&over_http), first_issue(&in_tests)]
}

/// An issue's place, keyword and message.
fn place_keyword_message(issue: &Value) -> (Option<&str>, Option<&str>, Option<&str>) {
    (
        issue["instancePath"].as_str(),
        issue["keyword"].as_str(),
        issue["message"].as_str(),
    )
}

#[tokio::test]
async fn an_f32_past_its_range_is_refused_on_both_reads() {
    let max = f64::from(f32::MAX);
    let served = common::Served::start(pack, TOKEN).await;
    let tested = TestPack::new(pack()).expect("a valid pack");
    for (factor, bound, message) in [
        (
            json!(1e39),
            "exclusiveMaximum",
            "must be < 3.4028235677973366e+38",
        ),
        // The least number an f32 reads as an infinity.
        (
            json!(3.4028235677973366e38),
            "exclusiveMaximum",
            "must be < 3.4028235677973366e+38",
        ),
        (
            json!(-1e39),
            "exclusiveMinimum",
            "must be > -3.4028235677973366e+38",
        ),
    ] {
        let input = json!({"factor": factor});
        let over_http = served.invoke("acme.scale", input.clone(), None).await;
        let issue = first_issue(&over_http);
        assert_eq!(issue["instancePath"], "/factor", "{issue}");
        assert_eq!(issue["keyword"], bound, "{issue}");
        assert_eq!(issue["message"], message, "{issue}");
        let in_tests = tested.call("acme.scale", input, TestContext::new()).await;
        let error = in_tests.error().expect("refused");
        assert_eq!(error.code, ErrorCode::InputValidationFailed);
        let issues = error.issues.as_ref().expect("issues");
        assert_eq!(issues[0].instance_path, "/factor");
        assert_eq!(issues[0].message, message);
    }
    // The largest finite f32 reaches the handler, finite: exactly, or as
    // Rust writes it (`3.4028235e38`, past the exact value, rounding to
    // it), on either read.
    for text in [json!(max), json!(3.4028235e38)] {
        let input = json!({"factor": text});
        let want = json!({"factor": max, "finite": true});
        let answer = served.invoke("acme.scale", input.clone(), None).await;
        assert_eq!(answer["output"], want, "{answer}");
        let answer = tested.call("acme.scale", input, TestContext::new()).await;
        assert_eq!(answer.output().expect("a result"), want);
    }
    // Both reads narrow the number the schema saw (an f64) to f32: at the
    // midpoint between 1 and the next f32, 1.0 on either (the text read
    // had rounded its decimal text straight to f32, 1.0000001).
    let midpoint = 1.0 + f64::powi(2.0, -24);
    let input = json!({"factor": midpoint});
    let want = json!({"factor": 1.0, "finite": true});
    let answer = served.invoke("acme.scale", input.clone(), None).await;
    assert_eq!(answer["output"], want, "{answer}");
    let answer = tested.call("acme.scale", input, TestContext::new()).await;
    assert_eq!(answer.output().expect("a result"), want);
    assert_eq!(served.stop().await, Ok(()));
}

#[derive(Deserialize, JsonSchema)]
struct Counts {
    counts: std::collections::BTreeMap<String, u32>,
}

async fn count(input: Counts, _ctx: ToolContext) -> Result<Value, ToolError> {
    Ok(json!({"keys": input.counts.len()}))
}

fn counting_pack() -> Pack {
    Pack::new().tool(
        Tool::new("acme.count")
            .description("Counts.")
            .handler(count),
    )
}

#[tokio::test]
async fn an_issue_under_an_odd_key_names_that_value() {
    let served = common::Served::start(counting_pack, TOKEN).await;
    let tested = TestPack::new(counting_pack()).expect("a valid pack");
    for (key, pointer) in [
        ("", "/counts/"),
        ("/", "/counts/~1"),
        ("~", "/counts/~0"),
        ("a", "/counts/a"),
    ] {
        let input = json!({"counts": {key: 0.5}});
        for issue in first_issues(&served, &tested, "acme.count", &input).await {
            assert_eq!(
                place_keyword_message(&issue),
                (Some(pointer), Some("type"), Some("must be integer")),
                "{key:?}: {issue}"
            );
            assert_eq!(
                issue["params"],
                json!({"type": "integer"}),
                "{key:?}: {issue}"
            );
            assert_eq!(
                issue["schemaPath"], "#/properties/counts/additionalProperties/type",
                "{issue}"
            );
        }
    }
    assert_eq!(served.stop().await, Ok(()));
}

#[derive(Deserialize, JsonSchema)]
struct Levels {
    by_byte: std::collections::BTreeMap<u8, bool>,
    by_offset: std::collections::BTreeMap<i8, bool>,
}

async fn levels(input: Levels, _ctx: ToolContext) -> Result<Value, ToolError> {
    Ok(json!({"keys": input.by_byte.len() + input.by_offset.len()}))
}

fn levels_pack() -> Pack {
    Pack::new().tool(
        Tool::new("acme.levels")
            .description("Levels.")
            .handler(levels),
    )
}

/// A map key out of its integer type's range is refused by the schema,
/// as any key no pattern takes, and the keys at the range's ends read.
#[tokio::test]
async fn an_integer_key_out_of_its_types_range_is_refused_by_the_schema() {
    let served = common::Served::start(levels_pack, TOKEN).await;
    let tested = TestPack::new(levels_pack()).expect("a valid pack");
    for (input, pointer) in [
        (
            json!({"by_byte": {"256": true}, "by_offset": {}}),
            "/by_byte",
        ),
        (
            json!({"by_byte": {}, "by_offset": {"128": true}}),
            "/by_offset",
        ),
        (
            json!({"by_byte": {}, "by_offset": {"-129": true}}),
            "/by_offset",
        ),
    ] {
        for issue in first_issues(&served, &tested, "acme.levels", &input).await {
            assert_eq!(
                place_keyword_message(&issue),
                (
                    Some(pointer),
                    Some("additionalProperties"),
                    Some("must NOT have additional properties")
                ),
                "{input}: {issue}"
            );
        }
    }
    let input =
        json!({"by_byte": {"0": true, "255": false}, "by_offset": {"-128": true, "127": true}});
    let answer = served.invoke("acme.levels", input, None).await;
    assert_eq!(answer["output"], json!({"keys": 4}), "{answer}");
    assert_eq!(served.stop().await, Ok(()));
}

#[derive(Deserialize, JsonSchema)]
struct Lookup {
    orders: Vec<OrderRef>,
}

#[derive(Deserialize, JsonSchema)]
struct OrderRef {
    id: uuid::Uuid,
}

async fn lookup(input: Lookup, _ctx: ToolContext) -> Result<Value, ToolError> {
    let ids: Vec<String> = input.orders.iter().map(|o| o.id.to_string()).collect();
    Ok(json!({"found": ids}))
}

fn lookup_pack() -> Pack {
    Pack::new().tool(
        Tool::new("acme.lookup")
            .description("Looks orders up.")
            .handler(lookup),
    )
}

/// `URN:UUID:…` passes the schema's `format: uuid` (as in ajv-formats,
/// whose pattern ignores case) and not the `uuid` crate, which takes the
/// prefix in lower case only: the refusal is serde's, at the field it
/// refused, over HTTP and in tests alike.
#[tokio::test]
async fn a_value_only_its_type_refuses_is_refused_at_its_pointer() {
    let served = common::Served::start(lookup_pack, TOKEN).await;
    let tested = TestPack::new(lookup_pack()).expect("a valid pack");
    let uuid = "67e55044-10b1-426f-9247-bb680e5fe0c8";
    let input = json!({"orders": [{"id": uuid}, {"id": format!("URN:UUID:{uuid}")}]});
    for issue in first_issues(&served, &tested, "acme.lookup", &input).await {
        assert_eq!(issue["instancePath"], "/orders/1/id", "{issue}");
        assert!(
            issue["message"]
                .as_str()
                .is_some_and(|m| m.starts_with("UUID parsing failed: ")),
            "{issue}"
        );
        assert_eq!(issue.get("keyword"), None, "{issue}");
    }
    // The lower-case prefix reads.
    let input = json!({"orders": [{"id": format!("urn:uuid:{uuid}")}]});
    let answer = served.invoke("acme.lookup", input, None).await;
    assert_eq!(answer["output"], json!({"found": [uuid]}), "{answer}");
    assert_eq!(served.stop().await, Ok(()));
}

/// A number that may be whole, untagged: `Whole`'s schema (an `i64`)
/// stops at 2^53 − 1, `Part`'s (an `f64`) takes any number.
#[derive(Deserialize, JsonSchema)]
#[serde(untagged)]
enum Amount {
    Whole(i64),
    Part(f64),
}

#[derive(Deserialize, JsonSchema)]
struct Big {
    amount: Amount,
    raw: Value,
}

async fn big(input: Big, _ctx: ToolContext) -> Result<Value, ToolError> {
    let amount = match input.amount {
        Amount::Whole(n) => json!({"whole": n}),
        Amount::Part(f) => json!({"part": f}),
    };
    Ok(json!({"amount": amount, "raw": input.raw}))
}

fn big_pack() -> Pack {
    Pack::new().tool(
        Tool::new("acme.big")
            .description("Big numbers.")
            .handler(big),
    )
}

/// Past `Number.MAX_SAFE_INTEGER` an integer reaches the handler as the
/// `f64` JavaScript (and Ajv) reads: in a `serde_json::Value`, and in an
/// untagged enum, whose integer variant (refused by its schema's maximum)
/// is never built from it. Up to the bound, integers stay integers. Over
/// HTTP (the text read) and in tests (the tree read) alike.
#[tokio::test]
async fn an_integer_past_2_pow_53_reaches_the_handler_as_javascript_reads_it() {
    let served = common::Served::start(big_pack, TOKEN).await;
    let tested = TestPack::new(big_pack()).expect("a valid pack");
    let past: Value = serde_json::from_str("9007199254740993").expect("a number");
    let safe: Value = serde_json::from_str("9007199254740991").expect("a number");
    for (sent, amount, raw) in [
        (
            past.clone(),
            json!({"part": 9_007_199_254_740_992.0}),
            json!(9_007_199_254_740_992.0),
        ),
        (
            safe.clone(),
            json!({"whole": 9_007_199_254_740_991_i64}),
            json!(9_007_199_254_740_991_i64),
        ),
    ] {
        let input = json!({"amount": sent, "raw": [sent]});
        let want = json!({"amount": amount, "raw": [raw]});
        let over_http = served.invoke("acme.big", input.clone(), None).await;
        assert_eq!(over_http["output"], want, "{over_http}");
        let in_tests = tested.call("acme.big", input, TestContext::new()).await;
        assert_eq!(in_tests.output().expect("a result"), want);
    }
    assert_eq!(served.stop().await, Ok(()));
}
