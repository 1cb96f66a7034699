//! A tool's input as the service hands it to its handler: a tree it has
//! validated, or the JSON text its schema's screen passed, which the
//! handler reads into its type directly.

use bytes::Bytes;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::numbers::read_typed;
use super::text_numbers::from_text;

/// A tool call's input, validated.
#[derive(Debug)]
pub(crate) enum ToolInput {
    /// Parsed, its defaults filled, then validated.
    Tree(Value),
    /// JSON text that [`kindgi_validate::Validator::accepts_text`] passed:
    /// valid, nothing to fill, and read into any type as its tree would be.
    Text(Bytes),
}

impl ToolInput {
    /// Reads the input into `T` as a JavaScript pack would see it (see
    /// [`read_typed`]). From text, straight into `T` (see [`from_text`]);
    /// should that fail, the text is read as a tree first, so the error
    /// (or the value) is the one a tree gives.
    pub(crate) fn read<T: DeserializeOwned>(self) -> serde_json::Result<T> {
        match self {
            ToolInput::Tree(value) => read_typed(value),
            ToolInput::Text(text) => {
                from_text(&text).or_else(|_| read_typed(serde_json::from_slice(&text)?))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;
    use serde_json::json;

    use super::*;

    #[derive(Debug, Deserialize, PartialEq)]
    struct Order {
        count: u32,
        note: Option<String>,
    }

    #[test]
    fn text_and_tree_read_alike() {
        let text = ToolInput::Text(Bytes::from_static(br#"{"count": 3, "note": "hi"}"#));
        let tree = ToolInput::Tree(json!({"count": 3, "note": "hi"}));
        let expected = Order {
            count: 3,
            note: Some("hi".into()),
        };
        assert_eq!(text.read::<Order>().expect("read"), expected);
        assert_eq!(tree.read::<Order>().expect("read"), expected);
    }

    #[test]
    fn a_text_that_fails_its_type_fails_with_the_tree_s_error() {
        let text = ToolInput::Text(Bytes::from_static(br#"{"count": "three"}"#));
        let tree = ToolInput::Tree(json!({"count": "three"}));
        let from_text = text.read::<Order>().expect_err("a string count");
        let from_tree = tree.read::<Order>().expect_err("a string count");
        assert_eq!(from_text.to_string(), from_tree.to_string());
        assert_eq!(
            from_text.to_string(),
            "invalid type: string \"three\", expected u32"
        );
    }

    #[test]
    fn a_text_with_an_integral_float_reads_as_its_tree() {
        // Not one the screen passes, but read all the same.
        let text = ToolInput::Text(Bytes::from_static(br#"{"count": 3.0}"#));
        assert_eq!(
            text.read::<Order>().expect("3.0 is 3"),
            Order {
                count: 3,
                note: None
            }
        );
    }
}
