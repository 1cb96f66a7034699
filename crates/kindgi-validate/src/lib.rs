//! JSON Schema 2020-12 validation with Ajv-shaped issues and Ajv-style
//! default filling: see [`Validator`], and the crate's README below.
#![doc = include_str!("../README.md")]

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
mod screen;
mod trail;
mod unique;
mod validator;

pub use defaults::MAX_FILLED_DEFAULTS;
pub use error::SchemaError;
pub use kindgi_protocol::Issue;
pub use validator::{MAX_ISSUES, MAX_VALUES_FOR_EVERY_ISSUE, TextRefusal, Validator, ValueRead};

#[cfg(feature = "fuzzing")]
pub mod fuzzing;
