//! A tool's input as the service hands it to its handler: a tree it has
//! validated, or (with the `fast-input` feature) the handler's own type
//! read straight from the JSON text and checked as it was read, by the
//! handler's [`TextReader`](super::text_input::TextReader) (no tree of the
//! input is ever built).

use serde::de::DeserializeOwned;
use serde_json::Value;

use super::numbers::{TypedRefusal, read_typed};

/// A tool call's input, validated.
#[derive(Debug)]
pub(crate) enum ToolInput {
    /// Parsed, its defaults filled, then validated.
    Tree(Value),
    /// Already the handler's input type, read by its
    /// [`TextReader`](super::text_input::TextReader) from
    /// JSON text that passed the schema's screen as it was read: valid,
    /// nothing to fill, and the value its tree would have given.
    #[cfg(feature = "fast-input")]
    Read(Box<dyn std::any::Any + Send>),
}

impl ToolInput {
    /// Reads the input into `T` as a JavaScript pack would see it (see
    /// [`read_typed`]); an input its text reader read is `T` already.
    pub(crate) fn read<T: DeserializeOwned + 'static>(self) -> Result<T, TypedRefusal> {
        match self {
            ToolInput::Tree(value) => read_typed(value),
            #[cfg(feature = "fast-input")]
            ToolInput::Read(value) => value
                .downcast::<T>()
                .map(|value| *value)
                .map_err(|_| TypedRefusal::whole("the input was read into another type")),
        }
    }
}
