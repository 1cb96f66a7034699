//! JSON Schemas derived from Rust types, as the index carries them.

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde_json::{Map, Value};

/// The JSON Schema (draft 2020-12) of `T`, as a tool's `input` / `output`
/// or a check's `configSchema` carries it.
///
/// It says what serde accepts: wire names after `#[serde(rename…)]`,
/// `required` for the fields that must be present, `default` for
/// `#[serde(default)]` fields, and validation keywords from
/// `#[schemars(length(min = 1))]`, `range(min = 0)`, `regex(pattern = …)`.
/// Subschemas are inlined, so the schema stands alone. Objects with
/// `properties` refuse other properties (`additionalProperties: false`)
/// unless the type sets `additionalProperties` itself, e.g. with
/// `#[schemars(extend("additionalProperties" = true))]`. Rust-only formats
/// (`int32`, `uint64`, `double`, …) are dropped: no JSON Schema validator
/// knows them.
///
/// ```
/// use schemars::JsonSchema;
/// use serde::Deserialize;
///
/// #[derive(Deserialize, JsonSchema)]
/// struct Greet {
///     #[schemars(length(min = 1))]
///     name: String,
///     #[serde(default)]
///     loud: bool,
/// }
///
/// let schema = kindgi::schema_for::<Greet>();
/// assert_eq!(schema["required"], serde_json::json!(["name"]));
/// assert_eq!(schema["properties"]["name"]["minLength"], 1);
/// assert_eq!(schema["properties"]["loud"]["default"], false);
/// assert_eq!(schema["additionalProperties"], false);
/// ```
pub fn schema_for<T: JsonSchema + ?Sized>() -> Value {
    let generator = SchemaSettings::draft2020_12()
        .with(|settings| settings.inline_subschemas = true)
        .into_generator();
    let mut schema = generator.into_root_schema_for::<T>().to_value();
    tidy(&mut schema, false);
    schema
}

/// Formats schemars writes for Rust's numeric types, which are not JSON
/// Schema formats.
const RUST_FORMATS: &[&str] = &[
    "int", "int8", "int16", "int32", "int64", "int128", "uint", "uint8", "uint16", "uint32",
    "uint64", "uint128", "float", "double", "isize", "usize",
];

fn tidy(schema: &mut Value, in_all_of: bool) {
    match schema {
        Value::Object(map) => {
            if map
                .get("format")
                .and_then(Value::as_str)
                .is_some_and(|f| RUST_FORMATS.contains(&f))
            {
                map.remove("format");
            }
            close_object(map, in_all_of);
            for (key, child) in map.iter_mut() {
                match key.as_str() {
                    // Values, not schemas.
                    "default" | "const" | "enum" | "examples" | "required" => {}
                    "allOf" => tidy(child, true),
                    "properties" | "$defs" | "definitions" | "patternProperties" => {
                        if let Value::Object(members) = child {
                            for member in members.values_mut() {
                                tidy(member, false);
                            }
                        }
                    }
                    _ => tidy(child, false),
                }
            }
        }
        Value::Array(items) => {
            for item in items {
                tidy(item, in_all_of);
            }
        }
        _ => {}
    }
}

/// Closes a struct's schema to other properties; members of an `allOf`
/// stay open, since closing them would refuse each other's properties.
fn close_object(map: &mut Map<String, Value>, in_all_of: bool) {
    if !in_all_of && map.contains_key("properties") && !map.contains_key("additionalProperties") {
        map.insert("additionalProperties".to_owned(), Value::Bool(false));
    }
}

#[cfg(test)]
mod tests {
    use super::schema_for;
    use schemars::JsonSchema;
    use serde::{Deserialize, Serialize};
    use serde_json::json;

    #[derive(Deserialize, Serialize, JsonSchema)]
    #[serde(rename_all = "camelCase")]
    #[derive(Default)]
    struct Options {
        #[serde(default)]
        loud: bool,
    }

    #[derive(Deserialize, Serialize, JsonSchema)]
    #[serde(rename_all = "camelCase")]
    #[allow(dead_code)]
    struct Input {
        /// Who to greet.
        #[serde(rename = "who")]
        #[schemars(length(min = 1, max = 10))]
        name: String,
        #[serde(default = "hello")]
        greeting: String,
        nick_name: Option<String>,
        #[schemars(range(min = 0, max = 5))]
        count: u8,
        #[serde(default)]
        options: Options,
        #[schemars(regex(pattern = r"^[a-z]+$"))]
        tag: String,
        color: Color,
    }

    fn hello() -> String {
        "Hello".to_owned()
    }

    #[derive(Deserialize, Serialize, JsonSchema)]
    #[serde(rename_all = "kebab-case")]
    enum Color {
        DarkRed,
        Blue,
    }

    #[derive(Deserialize, Serialize, JsonSchema)]
    #[schemars(extend("additionalProperties" = true))]
    struct Open {
        a: i32,
    }

    #[test]
    fn renames_required_defaults_limits() {
        let s = schema_for::<Input>();
        assert_eq!(s["$schema"], "https://json-schema.org/draft/2020-12/schema");
        assert_eq!(s["required"], json!(["who", "count", "tag", "color"]));
        assert_eq!(s["additionalProperties"], false);
        let p = &s["properties"];
        assert_eq!(p["who"]["minLength"], 1);
        assert_eq!(p["who"]["maxLength"], 10);
        assert_eq!(p["who"]["description"], "Who to greet.");
        assert_eq!(p["greeting"]["default"], "Hello");
        assert_eq!(p["nickName"]["type"], json!(["string", "null"]));
        assert_eq!(p["count"]["minimum"], 0);
        assert_eq!(p["count"]["maximum"], 5);
        assert!(p["count"].get("format").is_none(), "{}", p["count"]);
        assert_eq!(p["tag"]["pattern"], "^[a-z]+$");
        assert_eq!(p["color"]["enum"], json!(["dark-red", "blue"]));
    }

    #[test]
    fn nested_structs_are_inlined_and_closed() {
        let s = schema_for::<Input>();
        let options = &s["properties"]["options"];
        assert_eq!(options["type"], "object");
        assert_eq!(options["additionalProperties"], false);
        assert_eq!(options["default"], json!({"loud": false}));
        assert_eq!(options["properties"]["loud"]["default"], false);
        assert!(s.get("$defs").is_none());
    }

    #[test]
    fn a_type_can_stay_open() {
        assert_eq!(schema_for::<Open>()["additionalProperties"], true);
    }
}
