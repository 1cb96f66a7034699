//! The reader of a handler's input type from JSON text (feature
//! `fast-input`): one pass, every value checked against the tool's input
//! schema as it is read, no tree of the input built. What it can't settle
//! goes to the plain path (see `service::decode`).

use std::any::Any;

use kindgi_validate::{TextRefusal, Validator};
use serde::de::DeserializeOwned;

use super::text_numbers::from_text_passing;

/// Reads a handler's input type from JSON text in one pass, every value
/// checked against the tool's input schema as it is read (see
/// [`read_passing`]). A refusal says why the text wasn't read: the plain
/// path (parse the tree, fill it, validate it) answers it, unless it is
/// already the input's issues.
pub(crate) type TextReader = fn(&str, &Validator) -> Result<Box<dyn Any + Send>, TextRefusal>;

/// The [`TextReader`] of input type `T`.
pub(crate) fn read_passing<T: DeserializeOwned + Send + 'static>(
    text: &str,
    validator: &Validator,
) -> Result<Box<dyn Any + Send>, TextRefusal> {
    from_text_passing::<T>(text, validator).map(|value| Box::new(value) as Box<dyn Any + Send>)
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;
    use serde_json::{Value, json};

    use super::*;
    use crate::authoring::input::ToolInput;

    #[derive(Debug, Deserialize, PartialEq)]
    struct Order {
        count: u32,
        note: Option<String>,
    }

    fn validator(schema: Value) -> Validator {
        Validator::new(&schema).expect("a schema")
    }

    /// `Order`'s schema, with no other property allowed.
    fn order_schema() -> Validator {
        validator(json!({
            "type": "object",
            "properties": {
                "count": {"type": "integer", "minimum": 0},
                "note": {"type": "string"}
            },
            "required": ["count"],
            "additionalProperties": false
        }))
    }

    #[test]
    fn text_and_tree_read_alike() {
        let text = r#"{"count": 3, "note": "hi"}"#;
        let read = read_passing::<Order>(text, &order_schema()).expect("passes");
        let expected = Order {
            count: 3,
            note: Some("hi".into()),
        };
        assert_eq!(
            ToolInput::Read(read).read::<Order>().expect("read"),
            expected
        );
        let tree = ToolInput::Tree(serde_json::from_str(text).expect("JSON"));
        assert_eq!(tree.read::<Order>().expect("read"), expected);
    }

    #[test]
    fn a_text_its_schema_refuses_is_not_read() {
        for text in [
            r#"{"count": -1}"#,
            r#"{"note": "hi"}"#,
            // `Order` would skip it; the schema refuses it.
            r#"{"count": 3, "extra": 1}"#,
            r#"{"count": 3} 4"#,
            r#"{"count": 3"#,
        ] {
            let read = read_passing::<Order>(text, &order_schema());
            assert!(
                matches!(read, Err(TextRefusal::Invalid(_) | TextRefusal::Unsure)),
                "{text}"
            );
        }
    }

    #[test]
    fn a_text_that_misses_only_a_default_is_told_apart() {
        let defaulted = validator(json!({
            "type": "object",
            "properties": {
                "count": {"type": "integer", "minimum": 0, "default": 1},
                "note": {"type": "string"}
            }
        }));
        let read = |text| read_passing::<Order>(text, &defaulted).err();
        assert!(matches!(
            read(r#"{"note": "hi"}"#),
            Some(TextRefusal::ToFill)
        ));
        assert!(matches!(
            read(r#"{"note": 1}"#),
            Some(TextRefusal::Invalid(_) | TextRefusal::Unsure)
        ));
        // Missing both a default and what is required: invalid.
        let required = validator(json!({
            "type": "object",
            "properties": {
                "count": {"type": "integer", "default": 1},
                "note": {"type": "string"}
            },
            "required": ["note"]
        }));
        let read = read_passing::<Order>("{}", &required);
        assert!(matches!(
            read,
            Err(TextRefusal::Invalid(_) | TextRefusal::Unsure)
        ));
    }

    #[test]
    fn a_text_that_fails_its_type_is_left_to_the_tree() {
        // Valid for its schema, not for `Order`: the full path's tree gives
        // the error.
        let any = validator(json!({}));
        let read = read_passing::<Order>(r#"{"count": "three"}"#, &any);
        assert!(matches!(
            read,
            Err(TextRefusal::Invalid(_) | TextRefusal::Unsure)
        ));
        let tree = ToolInput::Tree(json!({"count": "three"}));
        assert_eq!(
            tree.read::<Order>()
                .expect_err("a string count")
                .to_string(),
            "invalid type: string \"three\", expected u32"
        );
    }

    #[test]
    fn a_text_with_an_integral_float_reads_as_its_tree() {
        let read = read_passing::<Order>(r#"{"count": 3.0}"#, &order_schema()).expect("passes");
        assert_eq!(
            ToolInput::Read(read).read::<Order>().expect("3.0 is 3"),
            Order {
                count: 3,
                note: None
            }
        );
    }

    #[test]
    fn an_input_read_into_another_type_is_an_error() {
        let read = ToolInput::Read(Box::new(3_u8));
        assert_eq!(
            read.read::<Order>().expect_err("not an Order").to_string(),
            "the input was read into another type"
        );
    }
}
