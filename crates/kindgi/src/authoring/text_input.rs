//! The reader of a handler's input type from JSON text (feature
//! `fast-input`): one pass, every value checked against the tool's input
//! schema as it is read, no tree of the input built. What it can't settle
//! goes to the plain path (see `service::decode`).

use std::any::Any;

use kindgi_validate::{Validator, ValueRead};
use serde::de::DeserializeOwned;

use super::text_numbers::value_from_text_passing;

/// Reads a handler's input type from the JSON value that starts a text, in
/// one pass, every value checked against the tool's input schema as it is
/// read (see [`read_passing`]): what was read, and how many bytes of the
/// text the value took, so that a request's reader goes on after it
/// without finding its end first. A refusal says why the value wasn't
/// read: the plain path (parse the tree, fill it, validate it) answers
/// it, unless it is already the input's issues. `None` when no JSON value
/// starts the text.
pub(crate) type TextReader = fn(&str, &Validator) -> Option<ValueRead<Box<dyn Any + Send>>>;

/// The [`TextReader`] of input type `T`.
pub(crate) fn read_passing<T: DeserializeOwned + Send + 'static>(
    text: &str,
    validator: &Validator,
) -> Option<ValueRead<Box<dyn Any + Send>>> {
    let ValueRead { read, len } = value_from_text_passing::<T>(text, validator)?;
    let read = read.map(|value| Box::new(value) as Box<dyn Any + Send>);
    Some(ValueRead { read, len })
}

#[cfg(test)]
mod tests {
    use kindgi_validate::TextRefusal;
    use serde::Deserialize;
    use serde_json::{Value, json};

    use super::*;
    use crate::authoring::input::ToolInput;

    #[derive(Debug, Deserialize, PartialEq)]
    struct Order {
        count: u32,
        note: Option<String>,
    }

    /// `text` read whole by `T`'s reader: what follows the value must be
    /// whitespace.
    fn read_passing<T: DeserializeOwned + Send + 'static>(
        text: &str,
        validator: &Validator,
    ) -> Result<Box<dyn Any + Send>, TextRefusal> {
        match super::read_passing::<T>(text, validator) {
            Some(ValueRead { read, len }) if text[len..].trim().is_empty() => read,
            _ => Err(TextRefusal::Unsure),
        }
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
    fn a_value_is_read_from_the_start_of_a_longer_text() {
        let text = r#" {"count": 3}, "ctx": {"tenantId": "t"}}"#;
        let Some(ValueRead { read, len }) = super::read_passing::<Order>(text, &order_schema())
        else {
            panic!("a value starts the text");
        };
        assert_eq!(&text[len..], r#", "ctx": {"tenantId": "t"}}"#);
        let read = read.expect("passes");
        assert_eq!(
            ToolInput::Read(read).read::<Order>().expect("read"),
            Order {
                count: 3,
                note: None
            }
        );
        // Refused, it still says where the value ends.
        let text = r#"{"count": -1} ,"x"]"#;
        let Some(ValueRead { read, len }) = super::read_passing::<Order>(text, &order_schema())
        else {
            panic!("a value starts the text");
        };
        assert_eq!(&text[len..], r#" ,"x"]"#);
        let Err(TextRefusal::Invalid(issues)) = read else {
            panic!("-1 is below the minimum");
        };
        assert_eq!(issues[0].instance_path, "/count");
        // No value: no read.
        for text in ["", "{\"count\": 3", "]"] {
            assert!(
                super::read_passing::<Order>(text, &order_schema()).is_none(),
                "{text}"
            );
        }
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
