//! What `kindgi dev` prints once the pack first serves: the URL, the token
//! and a `kindgi call` line ready to paste, its input made up from the
//! tool's input schema.
//!
//! The line calls a tool that can run with what it prints: none that
//! pauses, stores or reads files, or needs a secret or connection that
//! `.kindgi/` doesn't configure (the front adds those, so the line shows
//! no secret); the env values the tool declares that the pack's process
//! has go in as `--env`.

use std::ffi::OsString;
use std::path::Path;

use kindgi_protocol::{PackIndex, ToolEntry};
use serde_json::{Map, Value, json};

use super::local::{CONNECTIONS, CallValues, SECRETS, declared};

/// The pack that serves, and where.
#[derive(Debug)]
pub(crate) struct Serving<'a> {
    /// The front's URL.
    pub(crate) url: &'a str,
    /// The front's token.
    pub(crate) token: &'a str,
    /// The inspector's page.
    pub(crate) inspector: &'a str,
    /// The index it serves.
    pub(crate) index: &'a PackIndex,
    /// A copy of the index that stays put.
    pub(crate) index_path: &'a Path,
}

/// The lines to print; `env` is the pack process's environment.
pub(crate) fn banner(
    serving: &Serving<'_>,
    values: &CallValues,
    env: &[(OsString, OsString)],
) -> String {
    let Serving {
        url,
        token,
        inspector,
        index,
        index_path,
    } = serving;
    let mut text = format!(
        "kindgi dev: pack {} {} is serving at {url}\n  token: {token}\n  inspect: {inspector}\n",
        index.pack_id, index.pack_version
    );
    match index.tools.iter().find(|t| can_try(t, values)) {
        Some(tool) => {
            let input = example_input(&tool.input).to_string();
            let mut line = format!(
                "  try:   kindgi call {} --service {url} --token {} --index {}",
                tool.id,
                shell_quote(token),
                shell_quote(&index_path.display().to_string()),
            );
            for (name, value) in declared_env(tool, env) {
                line.push_str(&format!(" --env {}", shell_quote(&format!("{name}={value}"))));
            }
            text.push_str(&format!("{line} --input {}\n", shell_quote(&input)));
        }
        None if !index.tools.is_empty() => text.push_str(&format!(
            "  try:   no tool runs with what is configured (secrets go in {SECRETS}, connections in {CONNECTIONS})\n"
        )),
        None => {}
    }
    text.push_str(
        "  A save of any file the build used (path dependencies too) or of the .env files rebuilds and swaps it in; Ctrl-C stops.",
    );
    text
}

/// Whether a call of `tool` from the banner's line can succeed: it neither
/// pauses nor stores or reads files (that needs more than one line), and
/// every secret and connection it declares is configured.
fn can_try(tool: &ToolEntry, values: &CallValues) -> bool {
    !tool.pauses && !tool.stores_files && !tool.reads_files && values.covers(tool)
}

/// The env values `tool` declares (`needsSpec.env`) that `env` has.
fn declared_env<'e>(tool: &ToolEntry, env: &'e [(OsString, OsString)]) -> Vec<(String, &'e str)> {
    declared(tool, "env")
        .filter_map(|(name, _)| {
            env.iter()
                .find(|(set, _)| set == name.as_str())
                .and_then(|(_, value)| value.to_str())
                .map(|value| (name.clone(), value))
        })
        .collect()
}

/// Quotes a word for a POSIX shell when it needs it.
pub(crate) fn shell_quote(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./:=@,+".contains(&b));
    if plain {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// An input the schema accepts, as far as a guess goes: each required
/// property with its default, first allowed value, or a placeholder.
pub(crate) fn example_input(schema: &Value) -> Value {
    example(schema, schema, 0)
}

fn example(schema: &Value, root: &Value, depth: usize) -> Value {
    if depth > 8 {
        return Value::Null;
    }
    if let Some(reference) = schema["$ref"].as_str() {
        let target = reference
            .strip_prefix('#')
            .and_then(|pointer| root.pointer(pointer));
        return target.map_or(Value::Null, |t| example(t, root, depth + 1));
    }
    if let Some(default) = schema.get("default") {
        return default.clone();
    }
    if let Some(value) = schema.get("const") {
        return value.clone();
    }
    if let Some(first) = schema["enum"].as_array().and_then(|e| e.first()) {
        return first.clone();
    }
    for key in ["oneOf", "anyOf"] {
        if let Some(first) = schema[key].as_array().and_then(|v| v.first()) {
            return example(first, root, depth + 1);
        }
    }
    let kind = match &schema["type"] {
        Value::String(kind) => kind.as_str(),
        Value::Array(kinds) => kinds
            .iter()
            .filter_map(Value::as_str)
            .find(|k| *k != "null")
            .unwrap_or("null"),
        _ if schema.get("properties").is_some() => "object",
        _ => "",
    };
    match kind {
        "object" => {
            let mut object = Map::new();
            for name in schema["required"].as_array().into_iter().flatten() {
                if let Some(name) = name.as_str() {
                    let property = &schema["properties"][name];
                    object.insert(name.to_owned(), example(property, root, depth + 1));
                }
            }
            Value::Object(object)
        }
        "string" => match schema["format"].as_str() {
            Some("email") => json!("ana@example.com"),
            Some("uri") => json!("https://example.com"),
            Some("date") => json!("2026-01-01"),
            Some("date-time") => json!("2026-01-01T00:00:00Z"),
            _ => {
                let at_least = schema["minLength"].as_u64().unwrap_or(0);
                let at_most = schema["maxLength"].as_u64().unwrap_or(u64::MAX);
                let length = at_least.max(4).min(at_most).min(64);
                json!(
                    "text"
                        .chars()
                        .cycle()
                        .take(length as usize)
                        .collect::<String>()
                )
            }
        },
        "integer" | "number" => schema.get("minimum").cloned().unwrap_or_else(|| json!(1)),
        "boolean" => json!(false),
        "array" => json!([]),
        _ => Value::Null,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn makes_up_an_input_from_required_properties() {
        let schema = json!({
            "type": "object",
            "required": ["name", "topic", "email", "count", "options"],
            "properties": {
                "name": {"type": "string", "minLength": 1},
                "topic": {"$ref": "#/$defs/Topic"},
                "email": {"type": "string", "format": "email"},
                "count": {"type": "integer", "minimum": 3},
                "options": {"type": "object", "properties": {"loud": {"type": "boolean", "default": true}}},
                "optional": {"type": "string"}
            },
            "$defs": {"Topic": {"oneOf": [{"const": "billing"}, {"const": "other"}]}}
        });
        assert_eq!(
            example_input(&schema),
            json!({"name": "text", "topic": "billing", "email": "ana@example.com", "count": 3, "options": {}})
        );
    }

    fn tool(id: &str, extra: Value) -> ToolEntry {
        let mut entry = json!({"id": id, "input": {"type": "object", "required": ["q"],
            "properties": {"q": {"type": "string", "minLength": 6}}}, "output": {},
            "version": "1.0.0", "modulePath": "src/main.rs"});
        if let (Some(e), Some(x)) = (entry.as_object_mut(), extra.as_object()) {
            e.extend(x.clone());
        }
        serde_json::from_value(entry).expect("tool entry")
    }

    fn index(tools: Vec<ToolEntry>) -> PackIndex {
        let mut index: PackIndex = serde_json::from_value(json!({"v": 1, "packId": "acme",
            "packVersion": "1.0.0", "artifactVersion": "1", "publishedAt": "2026-01-01T00:00:00.000Z",
            "tools": [], "guardrails": [], "agents": [], "flows": []}))
        .expect("index");
        index.tools = tools;
        index
    }

    fn shown(index: &PackIndex, values: &CallValues, env: &[(&str, &str)]) -> String {
        let env: Vec<(OsString, OsString)> = env
            .iter()
            .map(|(n, v)| (OsString::from(n), OsString::from(v)))
            .collect();
        let serving = Serving {
            url: "http://127.0.0.1:8080",
            token: "tok",
            inspector: "http://127.0.0.1:8080/inspector/#token=tok",
            index,
            index_path: Path::new("/p/.kindgi/dev/index.json"),
        };
        banner(&serving, values, &env)
    }

    #[test]
    fn the_line_calls_a_tool_that_can_run_with_what_it_prints() {
        let secret = || {
            let mut values = CallValues::default();
            values.secrets.insert(
                "API_KEY".to_owned(),
                kindgi_protocol::Secret::new("sk-sentinel"),
            );
            values
        };
        let index = index(vec![
            tool("acme.a-pauses", json!({"pauses": true})),
            tool("acme.b-stores", json!({"storesFiles": true})),
            tool("acme.c-reads", json!({"readsFiles": true})),
            tool(
                "acme.d-crm",
                json!({"needsSpec": {"connections": {"crm": {"app": "acme-crm"}}}}),
            ),
            tool(
                "acme.e-keyed",
                json!({"needsSpec": {"secrets": {"API_KEY": {}},
                "env": {"REGION": {"type": "string"}, "UNSET": {"type": "string"}}}}),
            ),
            tool("acme.f-plain", json!({})),
        ]);
        let text = shown(&index, &CallValues::default(), &[]);
        assert!(
            text.contains(
                "  try:   kindgi call acme.f-plain --service http://127.0.0.1:8080 --token tok --index /p/.kindgi/dev/index.json --input '{\"q\":\"textte\"}'\n"
            ),
            "{text}"
        );
        // A configured secret makes the keyed tool callable; the front adds
        // the secret, so the line never shows it.
        let text = shown(
            &index,
            &secret(),
            &[("REGION", "eu west"), ("PATH", "/bin")],
        );
        assert!(
            text.contains("kindgi call acme.e-keyed --service http://127.0.0.1:8080 --token tok --index /p/.kindgi/dev/index.json --env 'REGION=eu west' --input"),
            "{text}"
        );
        assert!(!text.contains("sk-sentinel"), "{text}");

        let none = self::index(vec![tool("acme.a-pauses", json!({"pauses": true}))]);
        assert!(shown(&none, &CallValues::default(), &[]).contains(
            "  try:   no tool runs with what is configured (secrets go in .kindgi/secrets.env, connections in .kindgi/connections.env)\n"
        ));
    }

    #[test]
    fn quotes_for_the_shell() {
        assert_eq!(shell_quote("abc-1"), "abc-1");
        assert_eq!(shell_quote(r#"{"a":"it's"}"#), r#"'{"a":"it'\''s"}'"#);
        assert_eq!(
            shell_quote("/tmp/my pack/index.json"),
            "'/tmp/my pack/index.json'"
        );
    }
}
