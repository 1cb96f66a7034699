//! The pack's tool and check, called in-process exactly as its pack
//! service calls them: input and output validated against their schemas.

use kindgi::CheckResult;
use kindgi::protocol::{ErrorCode, Response};
use kindgi::testing::{TestContext, TestPack};
use kindgi::serde_json::json;

const GREET: &str = "{{name}}.greet";
const NOT_EMPTY: &str = "{{name}}.not-empty";

fn pack() -> TestPack {
    TestPack::new({{crate}}::pack()).expect("a valid pack")
}

#[tokio::test]
async fn greets_by_name() {
    let pack = pack();
    let greeted = pack.call(GREET, json!({"name": "Ana"}), TestContext::new());
    let output = greeted.await.output().expect("a result");
    let text = output["text"].as_str().unwrap_or_default();
    assert!(text.ends_with(", Ana!"), "{output}");

    let nameless = pack.call(GREET, json!({"name": ""}), TestContext::new());
    assert_eq!(
        nameless.await.error().map(|e| &e.code),
        Some(&ErrorCode::InputValidationFailed)
    );
}

#[test]
fn an_empty_answer_fails_the_check() {
    let pack = pack();
    let check = |output: &str| pack.check(NOT_EMPTY, json!({}), json!({"output": output}));
    let pass = Response::check_result(CheckResult::pass());
    assert_eq!(check("Hello, Ana!").response, pass);
    let fail = Response::check_result(CheckResult::fail("the output is empty"));
    assert_eq!(check("  ").response, fail);
}
