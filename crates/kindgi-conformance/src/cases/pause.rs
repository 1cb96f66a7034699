//! Protocol 2.8: a tool that declares `pauses` answers `pause` when its
//! call carries a wait token, and `pause-not-available` when it doesn't.

use serde_json::{Value, json};

use super::index::entry;
use super::tool;
use crate::case::{Case, Checked, Feature, ensure, eq, error_code, json_eq, result, str_at};
use crate::schema::MAX_PAUSE_MS;
use crate::session::{Profile, Session};

pub(crate) fn cases() -> Vec<Case> {
    use Feature::Pause;
    vec![
        Case::new(
            "pause.index-entry",
            Pause,
            "The index marks conformance.pause `pauses: true` and leaves it off conformance.pause-undeclared.",
            index_entry,
        ),
        Case::new(
            "pause.answer",
            Pause,
            "conformance.pause with a waitToken answers {v: 2, kind: \"pause\", timeoutMs, name} echoing its input, never the wait URL.",
            answer,
        ),
        Case::new(
            "pause.answer-defaults",
            Pause,
            "With no timeoutMs or name, the pause answer carries neither.",
            answer_defaults,
        ),
        Case::new(
            "pause.no-wait-token",
            Pause,
            "conformance.pause without a waitToken: error pause-not-available with toolId.",
            no_wait_token,
        ),
        Case::new(
            "pause.timeout-bounds",
            Pause,
            "timeoutMs 0 and exactly 24 days (2 073 600 000) are valid pauses, answered with that timeoutMs.",
            bounds,
        ),
        Case::new(
            "pause.timeout-too-long",
            Pause,
            "timeoutMs over 24 days: error handler-shape-invalid with toolId (a pause waits at most 24 days).",
            too_long,
        ),
        Case::new(
            "pause.result",
            Pause,
            "A pausing tool may still answer a result: {skip: true} gives {approved: true}.",
            skip,
        ),
        Case::new(
            "pause.undeclared",
            Pause,
            "conformance.pause-undeclared with a waitToken: error pause-not-available (its entry doesn't say pauses).",
            undeclared,
        ),
    ]
}

async fn index_entry(s: Session) -> Checked {
    let index = s.index().await?;
    let declared = entry(&index.json, "tools", "conformance.pause")?;
    eq(
        "conformance.pause pauses",
        Some(&json!(true)),
        declared.get("pauses"),
    )?;
    let undeclared = entry(&index.json, "tools", "conformance.pause-undeclared")?;
    eq(
        "conformance.pause-undeclared pauses",
        None,
        undeclared.get("pauses"),
    )
}

/// A context with a wait token whose URL is a sentinel.
fn waiting_ctx(s: &Session) -> (Value, String) {
    let url = format!(
        "https://waits.example.invalid/v1/waits/{}",
        s.sentinel("wait-url")
    );
    (
        json!({"tenantId": "t1", "runId": s.unique("pause"), "waitToken": {"id": s.unique("wait"), "url": url}}),
        url,
    )
}

async fn call(s: &Session, id: &str, input: Value, context: Value) -> Result<Value, String> {
    let service = s.service(Profile::Default).await?;
    s.invoke(&service, &tool(id, input, context)).await
}

async fn answer(s: Session) -> Checked {
    let (context, url) = waiting_ctx(&s);
    let answer = call(
        &s,
        "conformance.pause",
        json!({"timeoutMs": 60000, "name": "the carrier's pickup"}),
        context,
    )
    .await?;
    json_eq(
        "answer",
        &json!({"v": 2, "kind": "pause", "timeoutMs": 60000, "name": "the carrier's pickup"}),
        &answer,
    )?;
    ensure(!answer.to_string().contains(&url), || {
        "expected the wait URL kept out of the answer".to_owned()
    })
}

async fn answer_defaults(s: Session) -> Checked {
    let (context, _) = waiting_ctx(&s);
    let answer = call(&s, "conformance.pause", json!({}), context).await?;
    json_eq("answer", &json!({"v": 2, "kind": "pause"}), &answer)
}

async fn no_wait_token(s: Session) -> Checked {
    let answer = call(
        &s,
        "conformance.pause",
        json!({}),
        super::ctx(&s.unique("pause")),
    )
    .await?;
    error_code(&answer, "pause-not-available")?;
    eq("toolId", "conformance.pause", str_at(&answer, "/toolId")?)
}

async fn bounds(s: Session) -> Checked {
    for ms in [0, MAX_PAUSE_MS] {
        let (context, _) = waiting_ctx(&s);
        let answer = call(&s, "conformance.pause", json!({"timeoutMs": ms}), context).await?;
        json_eq(
            &format!("answer for timeoutMs {ms}"),
            &json!({"v": 2, "kind": "pause", "timeoutMs": ms}),
            &answer,
        )?;
    }
    Ok(())
}

async fn too_long(s: Session) -> Checked {
    let (context, _) = waiting_ctx(&s);
    let answer = call(
        &s,
        "conformance.pause",
        json!({"timeoutMs": MAX_PAUSE_MS + 1}),
        context,
    )
    .await?;
    error_code(&answer, "handler-shape-invalid")?;
    eq("toolId", "conformance.pause", str_at(&answer, "/toolId")?)
}

async fn skip(s: Session) -> Checked {
    let (context, _) = waiting_ctx(&s);
    result(
        &call(&s, "conformance.pause", json!({"skip": true}), context).await?,
        &json!({"approved": true}),
    )
}

async fn undeclared(s: Session) -> Checked {
    let (context, _) = waiting_ctx(&s);
    let answer = call(&s, "conformance.pause-undeclared", json!({}), context).await?;
    error_code(&answer, "pause-not-available")?;
    eq(
        "toolId",
        "conformance.pause-undeclared",
        str_at(&answer, "/toolId")?,
    )
}
