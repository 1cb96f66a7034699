//! What `kindgi dev` prints once the pack first serves: the URL, the token
//! and a `kindgi call` line ready to paste, its input made up from the
//! tool's input schema.

use std::path::Path;

use kindgi_protocol::{PackIndex, ToolEntry};
use serde_json::{Map, Value, json};

/// The lines to print.
pub(crate) fn banner(url: &str, token: &str, index: &PackIndex, index_path: &Path) -> String {
    let mut text = format!(
        "kindgi dev: pack {} {} is serving at {url}\n  token: {token}\n",
        index.pack_id, index.pack_version
    );
    if let Some(tool) = pick_tool(index) {
        let input = example_input(&tool.input).to_string();
        text.push_str(&format!(
            "  try:   kindgi call {} --service {url} --token {} --index {} --input {}\n",
            tool.id,
            shell_quote(token),
            shell_quote(&index_path.display().to_string()),
            shell_quote(&input),
        ));
    }
    text.push_str("  Every save of src/ or Cargo.toml rebuilds and swaps it in; Ctrl-C stops.");
    text
}

/// A tool worth a first try: one that neither pauses nor needs a
/// connection, else the first.
fn pick_tool(index: &PackIndex) -> Option<&ToolEntry> {
    let plain = |t: &&ToolEntry| {
        !t.pauses
            && t.needs_spec
                .as_ref()
                .is_none_or(|n| n.get("connections").is_none())
    };
    index
        .tools
        .iter()
        .find(plain)
        .or_else(|| index.tools.first())
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
            _ => json!("text"),
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
