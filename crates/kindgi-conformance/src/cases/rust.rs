//! What only the Rust fixture has: a panicking handler and a blocking one
//! that ignores its cancellation.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::index::entry;
use super::{ctx, tool};
use crate::case::{Case, Checked, Feature, ensure, eq, error_code, result, str_at};
use crate::session::{Profile, Session};

pub(crate) fn cases() -> Vec<Case> {
    use Feature::RustOnly;
    vec![
        Case::new(
            "rust.index-entries",
            RustOnly,
            "The index lists conformance.panics and conformance.blocking-sleep.",
            index_entries,
        ),
        Case::new(
            "rust.panics",
            RustOnly,
            "A panicking handler answers handler-throw (message kaboom) and the service keeps serving.",
            panics,
        ),
        Case::new(
            "rust.blocking-sleep.finished-late",
            RustOnly,
            "A blocking handler past a short deadline: deadline-exceeded at once, then a handler-finished-late record.",
            finished_late,
        ),
    ]
}

async fn index_entries(s: Session) -> Checked {
    let index = s.index().await?;
    entry(&index.json, "tools", "conformance.panics")?;
    entry(&index.json, "tools", "conformance.blocking-sleep")?;
    Ok(())
}

async fn panics(s: Session) -> Checked {
    let service = s.service(Profile::Default).await?;
    let answer = s
        .invoke(
            &service,
            &tool("conformance.panics", json!({}), ctx(&s.unique("panic"))),
        )
        .await?;
    error_code(&answer, "handler-throw")?;
    let message = str_at(&answer, "/message")?;
    ensure(
        message.starts_with("Handler for tool \"conformance.panics\" threw: ")
            && message.contains("kaboom"),
        || {
            format!(
                "message: expected `Handler for tool \"conformance.panics\" threw: ...kaboom`, got {message:?}"
            )
        },
    )?;
    let after = s
        .invoke(
            &service,
            &tool(
                "conformance.echo",
                json!({"message": "still here"}),
                ctx(&s.unique("panic")),
            ),
        )
        .await?;
    result(&after, &json!({"message": "still here"}))
}

async fn finished_late(s: Session) -> Checked {
    let service = s.service(Profile::Default).await?;
    let started = Instant::now();
    let message = tool(
        "conformance.blocking-sleep",
        json!({"ms": 2000}),
        ctx(&s.unique("late")),
    );
    let answer = s
        .invoke_with(&service, &message, &[("kindgi-timeout-ms", "200")])
        .await?;
    error_code(&answer, "deadline-exceeded")?;
    let took = started.elapsed();
    ensure(took < Duration::from_millis(1500), || {
        format!(
            "expected the deadline answer before the handler finished, got it after {} ms",
            took.as_millis()
        )
    })?;
    let record = service
        .output()
        .wait_for_record(
            |r| {
                r.get("kind") == Some(&json!("handler-finished-late"))
                    && r.to_string().contains("conformance.blocking-sleep")
            },
            Duration::from_secs(5),
        )
        .await
        .ok_or("expected a handler-finished-late record, got none")?;
    let after = record
        .get("afterMs")
        .and_then(Value::as_u64)
        .ok_or_else(|| format!("expected an integer afterMs in {record}"))?;
    eq(
        "level",
        Some("warn"),
        record.get("level").and_then(Value::as_str),
    )?;
    eq(
        "message",
        Some(
            format!("tool conformance.blocking-sleep finished {after} ms after its call ended")
                .as_str(),
        ),
        record.get("message").and_then(Value::as_str),
    )
}
