//! JSON Schema 2020-12 validation with Ajv-shaped issues and Ajv-style default filling.
//!
//! Pack services in other languages validate tool inputs and outputs with Ajv
//! (`allErrors: true`, ajv-formats, no type coercion, `useDefaults`). This
//! crate gives the same answers: the same issues (`instancePath`,
//! `schemaPath`, `keyword`, `params`, `message` in Ajv's words), in the same
//! order, and the same default filling. See [`Validator`].
//!
//! # How it works
//!
//! Validation itself is the `jsonschema` crate's, compiled once per schema.
//! Only an invalid instance pays for the rest: each error is walked back
//! through the schema to recover what Ajv reports and the crate does not
//! (Ajv's `schemaPath` through `$ref`s, its keyword evaluation order, the
//! extra `if` and `propertyNames` issues), then given Ajv's keyword, params
//! and message.
//!
//! # Where it can still differ from Ajv
//!
//! - Order among properties follows `serde_json::Map` iteration, which is
//!   alphabetical unless serde_json's `preserve_order` feature is on; Ajv
//!   follows the order the schema (or instance) was written in.
//! - The number formats of ajv-formats (`int32`, `int64`, `float`, `double`)
//!   are not checked; string formats follow ajv-formats' rules (`url` only
//!   approximately), and formats ajv-formats does not know are ignored.
//! - A `multipleOf` error under a `$ref` gets the canonical schema path and
//!   sorts after its siblings (the keyword is ours, to divide as Ajv does).
//! - Defaults are not filled through `then` / `else`, `patternProperties`, or
//!   `additionalProperties` next to `patternProperties`.
//! - Issues are bounded where Ajv's are not: at most [`MAX_ISSUES`], and for
//!   an invalid instance of more than [`MAX_VALUES_FOR_EVERY_ISSUE`] values,
//!   those of the first error only (for an `anyOf` / `oneOf` that fails,
//!   its own issue, without its branches'). Default filling stops at
//!   [`MAX_FILLED_DEFAULTS`] properties.

mod defaults;
mod error;
mod first_error;
mod formats;
mod issue;
mod js;
mod multiple_of;
mod order;
mod pointer;
mod refs;
mod trail;
mod unique;
mod validator;

pub use error::SchemaError;
pub use kindgi_protocol::Issue;
pub use validator::{MAX_FILLED_DEFAULTS, MAX_ISSUES, MAX_VALUES_FOR_EVERY_ISSUE, Validator};
