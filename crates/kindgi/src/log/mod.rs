//! The pack service's log records (CONTRACT §2): one JSON object a line on
//! stderr, or a readable line on a terminal.
//!
//! [`record`] says what a record holds, [`redact`] what it may not carry,
//! [`format`](mod@format) how it is written (the one place that formats
//! records), [`writer`] where the lines go; [`settings`] is what the
//! environment says of all that.

mod format;
mod record;
mod redact;
mod settings;
#[cfg(test)]
mod vectors;
mod writer;

pub(crate) use record::{
    CallFacts, CallPack, CallSpan, Ids, Level, PACK_TOOL, Record, TransportIds, call_ids,
    is_head_or_id_key,
};
#[cfg(feature = "otel")]
pub(crate) use redact::{REDACTED, is_secret_key, scrub_text};
pub(crate) use writer::Logger;
