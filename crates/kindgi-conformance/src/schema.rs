//! The reference schemas every answer and index is checked against.
//!
//! The bundled `pack-protocol.schema.json` is schema 2.5.0 and
//! `pack-index.schema.json` is 1.4.0, as published; the protocol this suite
//! checks is 2.10.0. [`patched_protocol_schema`] and [`patched_index_schema`]
//! add, in code, exactly what 2.7–2.10 added (see their docs), so that a
//! correct 2.10 answer validates.

use jsonschema::Validator;
use serde_json::{Value, json};

/// `pack-protocol.schema.json`, schema 2.5.0, as published.
pub const PROTOCOL_SCHEMA_2_5: &str = include_str!("../schemas/pack-protocol.schema.json");
/// `pack-index.schema.json`, schema 1.4.0, as published.
pub const INDEX_SCHEMA_1_4: &str = include_str!("../schemas/pack-index.schema.json");

/// The longest pause, in milliseconds: 24 days.
pub const MAX_PAUSE_MS: u64 = 24 * 24 * 60 * 60 * 1000;

/// The protocol schema 2.5.0 patched to 2.10.0:
///
/// - `errorCode` gains `connection-rejected` (2.9) and `pause-not-available` (2.8);
/// - `error` gains `connection` (2.9);
/// - `response` gains `toolPause` (2.8): `{v, kind: "pause", timeoutMs?, name?}`,
///   `timeoutMs` an integer of at most 24 days;
/// - `callContext` gains `connections` (2.9), `waitToken` (2.8) and `toolFiles` (2.10);
/// - `info` already has `indexHash` (2.7).
///
/// # Errors
///
/// When the bundled schema isn't the JSON it should be (a broken build).
pub fn patched_protocol_schema() -> Result<Value, String> {
    let mut schema: Value = serde_json::from_str(PROTOCOL_SCHEMA_2_5)
        .map_err(|e| format!("the bundled protocol schema isn't JSON: {e}"))?;
    let defs = schema
        .get_mut("$defs")
        .and_then(Value::as_object_mut)
        .ok_or("the bundled protocol schema has no $defs")?;
    if let Some(codes) = defs
        .get_mut("errorCode")
        .and_then(|c| c.get_mut("enum"))
        .and_then(Value::as_array_mut)
    {
        for code in ["connection-rejected", "pause-not-available"] {
            if !codes.iter().any(|c| c == code) {
                codes.push(json!(code));
            }
        }
    }
    if let Some(props) = defs
        .get_mut("error")
        .and_then(|e| e.get_mut("properties"))
        .and_then(Value::as_object_mut)
    {
        props.insert("connection".into(), json!({"type": "string"}));
    }
    defs.insert(
        "toolPause".into(),
        json!({
            "type": "object",
            "required": ["v", "kind"],
            "additionalProperties": false,
            "properties": {
                "v": {"$ref": "#/$defs/version"},
                "kind": {"const": "pause"},
                "timeoutMs": {"type": "integer", "maximum": MAX_PAUSE_MS},
                "name": {"type": "string"}
            }
        }),
    );
    if let Some(one_of) = defs
        .get_mut("response")
        .and_then(|r| r.get_mut("oneOf"))
        .and_then(Value::as_array_mut)
    {
        one_of.insert(1, json!({"$ref": "#/$defs/toolPause"}));
    }
    defs.insert(
        "connection".into(),
        json!({
            "type": "object",
            "required": ["connectionId", "app", "appName", "accessToken", "account"],
            "properties": {
                "connectionId": {"type": "string"},
                "app": {"type": "string"},
                "appName": {"type": "string"},
                "accessToken": {"type": "string"},
                "account": {
                    "type": "object",
                    "required": ["id", "label"],
                    "properties": {"id": {"type": "string"}, "label": {"type": "string"}}
                },
                "expiresAt": {"type": "string", "format": "date-time"}
            }
        }),
    );
    if let Some(props) = defs
        .get_mut("callContext")
        .and_then(|c| c.get_mut("properties"))
        .and_then(Value::as_object_mut)
    {
        props.insert(
            "connections".into(),
            json!({"type": "object", "additionalProperties": {"$ref": "#/$defs/connection"}}),
        );
        props.insert(
            "waitToken".into(),
            json!({
                "type": "object",
                "required": ["id", "url"],
                "properties": {"id": {"type": "string"}, "url": {"type": "string", "format": "uri"}}
            }),
        );
        props.insert(
            "toolFiles".into(),
            json!({
                "type": "object",
                "required": ["url", "token"],
                "properties": {"url": {"type": "string", "format": "uri"}, "token": {"type": "string"}}
            }),
        );
    }
    schema["$comment"] = json!(
        "schema-version: 2.5.0, patched by kindgi-conformance with the 2.7-2.10 additions of pack protocol 2.10.0"
    );
    Ok(schema)
}

/// The index schema 1.4.0 patched with CONTRACT §6's 2.8–2.10 additions: a
/// tool entry may carry `pauses`, `storesFiles` and `readsFiles`, each
/// `true` when present (absent when false). `needsSpec.connections` already
/// fits its open `needsSpec`.
///
/// # Errors
///
/// When the bundled schema isn't the JSON it should be (a broken build).
pub fn patched_index_schema() -> Result<Value, String> {
    let mut schema: Value = serde_json::from_str(INDEX_SCHEMA_1_4)
        .map_err(|e| format!("the bundled index schema isn't JSON: {e}"))?;
    let props = schema
        .pointer_mut("/$defs/tool/properties")
        .and_then(Value::as_object_mut)
        .ok_or("the bundled index schema has no $defs/tool/properties")?;
    for name in ["pauses", "storesFiles", "readsFiles"] {
        props.insert(name.into(), json!({"const": true}));
    }
    schema["$comment"] = json!(
        "schema-version: 1.4.0, patched by kindgi-conformance with the 2.8-2.10 tool fields of CONTRACT section 6"
    );
    Ok(schema)
}

/// Compiled validators of the (patched) schemas.
#[derive(Debug)]
pub struct Schemas {
    response: Validator,
    info: Validator,
    index: Validator,
}

/// `schema` with its root narrowed to one of its `$defs`.
fn narrowed(schema: &Value, def: &str) -> Value {
    let mut root = schema.clone();
    if let Some(map) = root.as_object_mut() {
        map.remove("oneOf");
        map.insert("$ref".into(), json!(format!("#/$defs/{def}")));
    }
    root
}

fn compile(schema: &Value, what: &str) -> Result<Validator, String> {
    jsonschema::options()
        .should_validate_formats(true)
        .build(schema)
        .map_err(|e| format!("the {what} schema doesn't compile: {e}"))
}

/// Every error of `validator` on `instance`, as one line.
fn errors(validator: &Validator, instance: &Value, what: &str) -> Result<(), String> {
    let found: Vec<String> = validator
        .iter_errors(instance)
        .take(5)
        .map(|e| {
            let at = e.instance_path().to_string();
            format!("{}: {e}", if at.is_empty() { "/" } else { at.as_str() })
        })
        .collect();
    if found.is_empty() {
        Ok(())
    } else {
        Err(format!("not valid against {what}: {}", found.join("; ")))
    }
}

impl Schemas {
    /// Compiles the patched schemas.
    ///
    /// # Errors
    ///
    /// When a bundled schema doesn't compile (a broken build).
    pub fn load() -> Result<Self, String> {
        let protocol = patched_protocol_schema()?;
        let index = patched_index_schema()?;
        Ok(Self {
            response: compile(&narrowed(&protocol, "response"), "protocol response")?,
            info: compile(&narrowed(&protocol, "info"), "protocol info")?,
            index: compile(&index, "pack index")?,
        })
    }

    /// Checks a 200 answer to `/v1/invoke` against the patched `response`.
    ///
    /// # Errors
    ///
    /// The schema's complaints.
    pub fn check_response(&self, answer: &Value) -> Result<(), String> {
        errors(
            &self.response,
            answer,
            "pack-protocol.schema.json (patched) #/$defs/response",
        )
    }

    /// Checks a `/v1/info` body against the patched `info`.
    ///
    /// # Errors
    ///
    /// The schema's complaints.
    pub fn check_info(&self, info: &Value) -> Result<(), String> {
        errors(
            &self.info,
            info,
            "pack-protocol.schema.json (patched) #/$defs/info",
        )
    }

    /// Checks an index against the patched `pack-index.schema.json`.
    ///
    /// # Errors
    ///
    /// The schema's complaints.
    pub fn check_index(&self, index: &Value) -> Result<(), String> {
        errors(&self.index, index, "pack-index.schema.json (patched)")
    }
}

/// Whether `instance` is valid against the JSON Schema `schema` (formats
/// checked).
///
/// # Errors
///
/// When `schema` doesn't compile.
pub fn is_valid(schema: &Value, instance: &Value) -> Result<bool, String> {
    Ok(compile(schema, "given")?.is_valid(instance))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patched_schemas_take_2_10_answers() {
        let schemas = Schemas::load().expect("compiles");
        schemas
            .check_response(&json!({"v": 2, "kind": "pause", "timeoutMs": 1000, "name": "x"}))
            .expect("pause");
        schemas
            .check_response(
                &json!({"v": 2, "kind": "error", "code": "connection-rejected",
                "message": "m", "toolId": "t", "connection": "crm"}),
            )
            .expect("connection-rejected");
        schemas
            .check_response(
                &json!({"v": 2, "kind": "error", "code": "pause-not-available", "message": "m"}),
            )
            .expect("pause-not-available");
        assert!(
            schemas
                .check_response(&json!({"v": 2, "kind": "pause", "timeoutMs": MAX_PAUSE_MS + 1}))
                .is_err()
        );
        assert!(
            schemas
                .check_response(&json!({"v": 2, "kind": "result"}))
                .is_err()
        );
        schemas
            .check_info(&json!({"protocol": 2, "packId": "p", "packVersion": "1", "artifactVersion": "a",
                "tools": [], "checks": [], "missingEnv": [], "indexHash": format!("sha256:{}", "0".repeat(64))}))
            .expect("info");
    }
}
