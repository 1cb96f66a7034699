//! A large tool input (a body of 1 KiB or more) is read straight from its
//! text into the handler's type, checked as it is read; whatever that read
//! can't take is answered as the full path answers it. Served by
//! `kindgi::serve` on 127.0.0.1, called over HTTP.

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};

use kindgi::{Pack, Tool, ToolContext, ToolError};
use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Value, json};

const TOKEN: &str = "library-token";

/// How many times a `Word` was read as "boom".
static BOOMS: AtomicUsize = AtomicUsize::new(0);

/// A word its `Deserialize` panics at: the pack's own code.
#[derive(Debug, Serialize, JsonSchema)]
struct Word(String);

impl<'de> Deserialize<'de> for Word {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Word, D::Error> {
        let word = String::deserialize(deserializer)?;
        if word == "boom" {
            BOOMS.fetch_add(1, Ordering::SeqCst);
            panic!("a word that blows up");
        }
        Ok(Word(word))
    }
}

/// Words enough to make the body large, and how many to count.
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
struct Words {
    words: Vec<Word>,
    #[serde(default = "one")]
    #[schemars(range(min = 1, max = 9))]
    times: u32,
}

fn one() -> u32 {
    1
}

async fn count(input: Words, _ctx: ToolContext) -> Result<Value, ToolError> {
    Ok(json!({"words": input.words.len(), "times": input.times}))
}

/// A typed handler under a schema looser than its type.
#[derive(Debug, Deserialize, JsonSchema)]
struct Counted {
    count: u32,
    #[expect(dead_code, reason = "there to make the body large")]
    filler: Vec<String>,
}

async fn loose(input: Counted, _ctx: ToolContext) -> Result<Value, ToolError> {
    Ok(json!({"count": input.count}))
}

fn pack() -> Pack {
    Pack::new()
        .tool(
            Tool::new("acme.count")
                .description("Counts its words.")
                .handler(count),
        )
        .tool(
            Tool::new("acme.loose")
                .description("Reads a count its schema doesn't type.")
                .input_schema(json!({"type": "object"}))
                .handler(loose),
        )
}

/// 200 words: a body well past 1 KiB.
fn words() -> Vec<String> {
    (0..200).map(|i| format!("word {i}")).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_the_text_read_cannot_take_is_answered_as_the_full_path_answers_it() {
    let served = common::Served::start(pack, TOKEN).await;

    // Read from its text.
    let answer = served
        .invoke("acme.count", json!({"words": words(), "times": 3}), None)
        .await;
    assert_eq!(
        answer,
        json!({"kind": "result", "v": 2, "output": {"words": 200, "times": 3}})
    );

    // A default to fill: read from its tree, filled.
    let answer = served
        .invoke("acme.count", json!({"words": words()}), None)
        .await;
    assert_eq!(
        answer,
        json!({"kind": "result", "v": 2, "output": {"words": 200, "times": 1}})
    );

    // Invalid: its issues, as the full path finds them.
    let answer = served
        .invoke("acme.count", json!({"words": words(), "times": 10}), None)
        .await;
    assert_eq!(answer["code"], "input-validation-failed", "{answer}");
    assert_eq!(
        answer["issues"],
        json!([{
            "instancePath": "/times",
            "schemaPath": "#/properties/times/maximum",
            "keyword": "maximum",
            "params": {"comparison": "<=", "limit": 9},
            "message": "must be <= 9"
        }])
    );

    // Valid for its schema, not for its type: the type's own error.
    let answer = served
        .invoke(
            "acme.loose",
            json!({"count": "three", "filler": words()}),
            None,
        )
        .await;
    assert_eq!(answer["code"], "input-validation-failed", "{answer}");
    assert_eq!(
        answer["issues"][0]["message"], "invalid type: string \"three\", expected u32",
        "{answer}"
    );

    // The type's `Deserialize` panics: the call's error, as a handler's
    // panic is, that code run once; and the service goes on serving.
    let mut blowing_up = words();
    blowing_up.push("boom".to_owned());
    let answer = served
        .invoke("acme.count", json!({"words": blowing_up}), None)
        .await;
    assert_eq!(
        answer,
        json!({
            "kind": "error",
            "v": 2,
            "code": "handler-throw",
            "message": "Handler for tool \"acme.count\" threw: panic: a word that blows up",
            "toolId": "acme.count",
            "cause": {
                "name": "panic",
                "message": "a word that blows up",
                "stack": "panic: a word that blows up"
            }
        })
    );
    assert_eq!(BOOMS.load(Ordering::SeqCst), 1);
    let answer = served
        .invoke("acme.count", json!({"words": words(), "times": 2}), None)
        .await;
    assert_eq!(
        answer,
        json!({"kind": "result", "v": 2, "output": {"words": 200, "times": 2}})
    );

    assert_eq!(served.stop().await, Ok(()));
}
