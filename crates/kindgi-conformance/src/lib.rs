//! A black-box conformance suite for Kindgi pack services, in any language.
//!
//! The suite drives a pack service the way a runtime does: it runs the
//! target's index command, starts its serve command with `--index`,
//! `--module-root` and `--host 127.0.0.1`, `PORT=0`, a fresh token and JSON
//! logs, waits for the `listening` record, and then speaks HTTP to it
//! (HTTP/1.1, or h2c: [`Suite::transport`]) —
//! checking every status, body, record and error text the contract pins
//! (pack protocol 2.10.0 and `CONTRACT.md`) against the conformance fixture
//! pack. Every 200 answer is validated against the protocol schema, patched
//! for 2.7–2.10 (see [`schema`]).
//!
//! ```no_run
//! # async fn demo() {
//! use kindgi_conformance::{Suite, Target};
//! let target = Target::new(
//!     vec!["./target/debug/conformance-pack".into(), "serve".into()],
//!     "./target/debug/conformance-pack index --pack-dir fixtures/conformance-pack \
//!      --output {out} --artifact-version {artifactVersion} --published-at {publishedAt}",
//!     "fixtures/conformance-pack",
//! );
//! let report = Suite::new(target).run(|line| println!("{line}")).await;
//! std::process::exit(if report.ok() { 0 } else { 1 });
//! # }
//! ```
//!
//! The case list, and how another language's fixture pack implements the
//! 2.8–2.10 tools, are in the crate's README, included below.
#![doc = include_str!("../README.md")]

mod case;
mod cases;
pub mod differential;
pub mod harness;
pub mod http;
pub mod json;
mod output;
mod runner;
pub mod schema;
mod session;
mod shell;

pub use case::{Case, Checked, Feature};
pub use harness::{Pins, StartOptions, Target};
pub use http::Transport;
pub use runner::{CaseReport, Outcome, Report, Suite, cases};
