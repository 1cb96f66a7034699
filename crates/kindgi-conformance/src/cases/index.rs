//! The index: reproducible canonical bytes, the schema, the fixture's
//! entries, and the schemas it writes for them.

use serde_json::{Value, json};

use super::ids;
use crate::case::{Case, Checked, Feature, ensure, eq};
use crate::harness::Pins;
use crate::json::{canonical_pretty, utf16_cmp};
use crate::schema;
use crate::session::Session;

/// CONTRACT §8's tools.
pub(crate) const FIXTURE_TOOLS: [&str; 9] = [
    "conformance.echo",
    "conformance.bad-output",
    "conformance.throws",
    "conformance.sleep",
    "conformance.hold",
    "conformance.context",
    "conformance.defaults",
    "conformance.noisy",
    "conformance.process-env",
];

pub(crate) fn cases() -> Vec<Case> {
    use Feature::Index;
    vec![
        Case::new(
            "index.reproducible",
            Index,
            "Indexing twice with the same pins writes the same bytes.",
            reproducible,
        ),
        Case::new(
            "index.canonical",
            Index,
            "The bytes are the canonical re-serialization: keys sorted, two-space indent, trailing newline.",
            canonical,
        ),
        Case::new(
            "index.schema",
            Index,
            "The index is valid against pack-index.schema.json (patched for 2.8-2.10).",
            valid,
        ),
        Case::new(
            "index.envelope",
            Index,
            "v 1, packId conformance, packVersion 1.0.0, and the pinned artifactVersion and publishedAt.",
            envelope,
        ),
        Case::new(
            "index.sorted",
            Index,
            "tools, guardrails, agents and flows are each sorted by id.",
            sorted,
        ),
        Case::new(
            "index.fixture-ids",
            Index,
            "tools, guardrails, agents and flows contain CONTRACT section 8's ids.",
            fixture_ids,
        ),
        Case::new(
            "index.tool-versions",
            Index,
            "Every fixture tool is version 1.0.0.",
            tool_versions,
        ),
        Case::new(
            "index.module-paths",
            Index,
            "Every modulePath and checkModulePath is relative, uses forward slashes and names a file in the pack folder.",
            module_paths,
        ),
        Case::new(
            "index.guardrails",
            Index,
            "The two guardrails carry kind, checkId, checkModulePath and their on-violation actions.",
            guardrails,
        ),
        Case::new(
            "index.agent",
            Index,
            "conformance.echo-agent 1.0.0 uses conformance.echo 1.0.0, guarded by conformance.min-length.",
            agent,
        ),
        Case::new(
            "index.flow",
            Index,
            "conformance.echo-flow 1.0.0: kernelPayloadVersion 1, tool node echo, edges $start -> echo -> $end.",
            flow,
        ),
        Case::new(
            "index.echo-input-schema",
            Index,
            "echo's input schema accepts {message: \"hi\"} and rejects {}, an empty message and an extra property.",
            echo_schema,
        ),
        Case::new(
            "index.min-length-config-schema",
            Index,
            "min-length's configSchema accepts {minLength: 2} and rejects {minLength: -1}.",
            min_length_schema,
        ),
    ]
}

async fn reproducible(s: Session) -> Checked {
    let first = s.index().await?;
    let again = s.path("index-again.json");
    s.target()
        .index(&again, &Pins::default())
        .await
        .map_err(|e| e.to_string())?;
    let second =
        std::fs::read(&again).map_err(|e| format!("cannot read {}: {e}", again.display()))?;
    ensure(second == first.bytes, || {
        format!(
            "expected the same bytes twice, got a difference: {}",
            first_difference(&first.bytes, &second)
        )
    })
}

fn first_difference(expected: &[u8], got: &[u8]) -> String {
    let expected = String::from_utf8_lossy(expected);
    let got = String::from_utf8_lossy(got);
    let mut lines = expected.split('\n').zip(got.split('\n')).enumerate();
    match lines.find(|(_, (a, b))| a != b) {
        Some((n, (a, b))) => format!("line {}: expected {a:?}, got {b:?}", n + 1),
        None => format!("expected {} bytes, got {}", expected.len(), got.len()),
    }
}

async fn canonical(s: Session) -> Checked {
    let index = s.index().await?;
    let expected = canonical_pretty(&index.json);
    ensure(expected.as_bytes() == index.bytes.as_slice(), || {
        format!(
            "not canonical: {}",
            first_difference(expected.as_bytes(), &index.bytes)
        )
    })
}

async fn valid(s: Session) -> Checked {
    let index = s.index().await?;
    s.schemas()?.check_index(&index.json)
}

async fn envelope(s: Session) -> Checked {
    let index = s.index().await?;
    let pins = Pins::default();
    let j = &index.json;
    eq("v", Some(1), j.get("v").and_then(Value::as_u64))?;
    eq(
        "packId",
        Some("conformance"),
        j.get("packId").and_then(Value::as_str),
    )?;
    eq(
        "packVersion",
        Some("1.0.0"),
        j.get("packVersion").and_then(Value::as_str),
    )?;
    eq(
        "artifactVersion",
        Some(pins.artifact_version.as_str()),
        j.get("artifactVersion").and_then(Value::as_str),
    )?;
    eq(
        "publishedAt",
        Some(pins.published_at.as_str()),
        j.get("publishedAt").and_then(Value::as_str),
    )
}

async fn sorted(s: Session) -> Checked {
    let index = s.index().await?;
    for list in ["tools", "guardrails", "agents", "flows"] {
        let got = ids(index.json.get(list));
        let mut want = got.clone();
        want.sort_by(|a, b| utf16_cmp(a, b));
        eq(&format!("{list} order"), want, got)?;
    }
    Ok(())
}

async fn fixture_ids(s: Session) -> Checked {
    let index = s.index().await?;
    let expect = [
        ("tools", FIXTURE_TOOLS.to_vec()),
        (
            "guardrails",
            vec!["conformance.min-length", "conformance.check-throws"],
        ),
        ("agents", vec!["conformance.echo-agent"]),
        ("flows", vec!["conformance.echo-flow"]),
    ];
    for (list, want) in expect {
        let got = ids(index.json.get(list));
        let missing: Vec<&str> = want
            .iter()
            .copied()
            .filter(|id| !got.iter().any(|g| g == id))
            .collect();
        ensure(missing.is_empty(), || {
            format!("{list}: expected {missing:?} among them, got {got:?}")
        })?;
    }
    Ok(())
}

/// The index entry of `id` in `list`.
pub(crate) fn entry<'a>(index: &'a Value, list: &str, id: &str) -> Result<&'a Value, String> {
    index
        .get(list)
        .and_then(Value::as_array)
        .and_then(|items| items.iter().find(|e| e.get("id") == Some(&Value::from(id))))
        .ok_or_else(|| {
            format!(
                "expected {list} to have {id:?}, got {:?}",
                ids(index.get(list))
            )
        })
}

async fn tool_versions(s: Session) -> Checked {
    let index = s.index().await?;
    for id in FIXTURE_TOOLS {
        let tool = entry(&index.json, "tools", id)?;
        eq(
            &format!("{id} version"),
            Some("1.0.0"),
            tool.get("version").and_then(Value::as_str),
        )?;
    }
    Ok(())
}

async fn module_paths(s: Session) -> Checked {
    let index = s.index().await?;
    let named = [
        ("tools", "modulePath"),
        ("guardrails", "checkModulePath"),
        ("agents", "modulePath"),
        ("flows", "modulePath"),
    ];
    for (list, key) in named {
        for item in index
            .json
            .get(list)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let id = item.get("id").and_then(Value::as_str).unwrap_or("?");
            let Some(path) = item.get(key).and_then(Value::as_str) else {
                if list == "tools" || list == "guardrails" {
                    return Err(format!("{id}: expected a {key}, got none"));
                }
                continue;
            };
            ensure(
                !path.starts_with('/') && !path.contains('\\') && !path.contains(':'),
                || format!("{id}: expected a relative path with forward slashes, got {path:?}"),
            )?;
            let file = s.target().pack_dir().join(path);
            ensure(file.is_file(), || {
                format!(
                    "{id}: {key} {path:?} names no file under {}",
                    s.target().pack_dir().display()
                )
            })?;
        }
    }
    Ok(())
}

async fn guardrails(s: Session) -> Checked {
    let index = s.index().await?;
    let want = [
        (
            "conformance.min-length",
            "conformance.checks.min-length",
            "halt",
        ),
        (
            "conformance.check-throws",
            "conformance.checks.throws",
            "log-only",
        ),
    ];
    for (id, check_id, action) in want {
        let g = entry(&index.json, "guardrails", id)?;
        eq(
            &format!("{id} checkId"),
            Some(check_id),
            g.get("checkId").and_then(Value::as_str),
        )?;
        eq(
            &format!("{id} on-violation"),
            Some(action),
            g.pointer("/action/on-violation").and_then(Value::as_str),
        )?;
        ensure(g.get("kind").is_some_and(Value::is_string), || {
            format!("{id}: expected a kind, got {g}")
        })?;
        ensure(
            g.get("checkModulePath").is_some_and(Value::is_string),
            || format!("{id}: expected a checkModulePath, got {g}"),
        )?;
    }
    Ok(())
}

async fn agent(s: Session) -> Checked {
    let index = s.index().await?;
    let a = entry(&index.json, "agents", "conformance.echo-agent")?;
    eq(
        "version",
        Some("1.0.0"),
        a.get("version").and_then(Value::as_str),
    )?;
    let tools = a
        .get("tools")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    ensure(
        tools.contains(&json!({"id": "conformance.echo", "version": "1.0.0"})),
        || format!("tools: expected {{id: conformance.echo, version: 1.0.0}}, got {tools:?}"),
    )?;
    let guards = a
        .get("guardrails")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    ensure(guards.contains(&json!("conformance.min-length")), || {
        format!("guardrails: expected conformance.min-length, got {guards:?}")
    })
}

async fn flow(s: Session) -> Checked {
    let index = s.index().await?;
    let f = entry(&index.json, "flows", "conformance.echo-flow")?;
    eq(
        "version",
        Some("1.0.0"),
        f.get("version").and_then(Value::as_str),
    )?;
    eq(
        "kernelPayloadVersion",
        Some(1),
        f.get("kernelPayloadVersion").and_then(Value::as_u64),
    )?;
    let node = f
        .get("nodes")
        .and_then(Value::as_array)
        .and_then(|nodes| nodes.iter().find(|n| n.get("id") == Some(&json!("echo"))))
        .ok_or_else(|| format!("expected a node echo, got {f}"))?;
    eq(
        "node echo kind",
        Some("tool"),
        node.get("kind").and_then(Value::as_str),
    )?;
    eq(
        "node echo ref",
        Some("conformance.echo"),
        node.get("ref").and_then(Value::as_str),
    )?;
    let edges: Vec<(String, String)> = f
        .get("edges")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|e| {
            let end = |k: &str| {
                e.get(k)
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned()
            };
            (end("from"), end("to"))
        })
        .collect();
    for want in [("$start", "echo"), ("echo", "$end")] {
        ensure(
            edges.iter().any(|(a, b)| a == want.0 && b == want.1),
            || format!("edges: expected {} -> {}, got {edges:?}", want.0, want.1),
        )?;
    }
    Ok(())
}

/// `schema` accepts each of `good` and rejects each of `bad`.
fn accepts(what: &str, schema_value: &Value, good: &[Value], bad: &[Value]) -> Checked {
    for instance in good {
        ensure(schema::is_valid(schema_value, instance)?, || {
            format!("{what}: expected {instance} accepted, got it rejected")
        })?;
    }
    for instance in bad {
        ensure(!schema::is_valid(schema_value, instance)?, || {
            format!("{what}: expected {instance} rejected, got it accepted")
        })?;
    }
    Ok(())
}

async fn echo_schema(s: Session) -> Checked {
    let index = s.index().await?;
    let input = entry(&index.json, "tools", "conformance.echo")?
        .get("input")
        .cloned()
        .unwrap_or_default();
    accepts(
        "echo input",
        &input,
        &[json!({"message": "hi"})],
        &[
            json!({}),
            json!({"message": ""}),
            json!({"message": "hi", "extra": 1}),
        ],
    )
}

async fn min_length_schema(s: Session) -> Checked {
    let index = s.index().await?;
    let g = entry(&index.json, "guardrails", "conformance.min-length")?;
    let config = g
        .get("configSchema")
        .cloned()
        .ok_or_else(|| format!("expected a configSchema, got {g}"))?;
    accepts(
        "min-length config",
        &config,
        &[json!({"minLength": 2})],
        &[json!({"minLength": -1})],
    )
}
