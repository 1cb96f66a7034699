//! Attribute macros of the Kindgi pack SDK: [`macro@tool`],
//! [`macro@tools`] and [`macro@check`], used as `#[kindgi::tool]`,
//! `#[kindgi::tools]` and `#[kindgi::check]`.
#![doc = include_str!("../README.md")]

mod args;
mod check;
mod func;
mod id;
mod tool;
mod tools;

use proc_macro::TokenStream;

/// Declares a tool: keeps the function, and adds `fn <name>_tool() -> kindgi::Tool`
/// with the same visibility.
///
/// It goes on an `async fn name(input: Input) -> Result<Output, E>` (with
/// `ctx: ToolContext` after the input when the handler needs the call's
/// context), or on a plain `fn` of the same shape with `blocking`. For
/// tools that share state, see [`macro@tools`]. The handler's types
/// give the schemas: `Input` is `Deserialize + JsonSchema`, `Output` is
/// `Serialize + JsonSchema` (or `Reply<T>` for a tool that may pause) and `E`
/// is any `std::error::Error` (or `ToolError`).
///
/// ```
/// use kindgi::ToolError;
/// use schemars::JsonSchema;
/// use serde::{Deserialize, Serialize};
///
/// #[derive(Deserialize, JsonSchema)]
/// struct EchoInput { message: String }
/// #[derive(Serialize, JsonSchema)]
/// struct EchoOutput { message: String }
///
/// /// Echo the message back.
/// #[kindgi::tool(id = "acme.echo", version = "1.2.0", mutating = false)]
/// async fn echo(input: EchoInput) -> Result<EchoOutput, ToolError> {
///     Ok(EchoOutput { message: input.message })
/// }
///
/// let tool = echo_tool(); // a kindgi::Tool, ready for Pack::tool
/// assert_eq!(tool.id(), "acme.echo");
/// ```
///
/// `echo_tool()` is:
///
/// ```text
/// kindgi::Tool::new("acme.echo")
///     .description("Echo the message back.")
///     .version("1.2.0")
///     .mutating(false)
///     .handler(echo)
/// ```
///
/// # Arguments
///
/// | argument | builder call |
/// | --- | --- |
/// | `id = "acme.echo"` (required) | `Tool::new("acme.echo")` |
/// | `description = "..."` or `= SOME_CONST` | `.description(...)`, else the doc comment (see below) |
/// | `version = "1.2.0"` | `.version("1.2.0")` |
/// | `mutating = false` | `.mutating(false)` |
/// | `needs_approval_when_unattended = true` | `.needs_approval_when_unattended(true)` |
/// | `pauses = true` | `.pauses(true)` (default: whether the output is `Reply<T>`) |
/// | `stores_files` | `.stores_files()` |
/// | `reads_files` | `.reads_files()` |
/// | `blocking` | `.blocking_handler(name)` instead of `.handler(name)` |
///
/// A flag alone means `true`: `mutating` is `mutating = true`, and
/// `stores_files = false` is the same as leaving it out. The id is checked
/// at compile time: ASCII letters, digits and `. _ - : /`, starting with a
/// letter or digit, at most 200 bytes.
///
/// The description the model reads is the function's doc comment as rustdoc
/// shows it (one leading space off each line, lines joined by newlines,
/// trimmed), unless `description = "..."` is given. Doc attributes that
/// aren't string literals (`#[doc = include_str!(..)]`) are not read: use
/// `description` then.
///
/// # Effects, needs and everything else
///
/// Effects, env values, secrets, connections and other index fields are not
/// arguments: chain the builder methods on the generated function.
///
/// ```
/// # use kindgi::ToolError;
/// # /// Echo.
/// # #[kindgi::tool(id = "acme.echo")]
/// # async fn echo(input: String) -> Result<String, ToolError> { Ok(input) }
/// let tool = echo_tool()
///     .effect(kindgi::EffectKind::Network, Some("api.example.com"))
///     .needs_secret("API_KEY")
///     .needs_env("REGION", serde_json::json!({"type": "string", "default": "eu"}))
///     .needs_connection("crm", "salesforce", &["read"]);
/// ```
///
/// # Blocking tools
///
/// ```
/// use kindgi::{ToolContext, ToolError};
/// # #[derive(serde::Deserialize, schemars::JsonSchema)] struct Text { text: String }
/// # #[derive(serde::Serialize, schemars::JsonSchema)] struct Count { words: usize }
///
/// /// Count the words of a large text.
/// #[kindgi::tool(id = "acme.word-count", blocking)]
/// fn word_count(input: Text, ctx: ToolContext) -> Result<Count, ToolError> {
///     // Runs on the blocking pool; a long loop checks ctx.is_cancelled().
///     let mut words = 0;
///     for _ in input.text.split_whitespace() {
///         if ctx.is_cancelled() {
///             break;
///         }
///         words += 1;
///     }
///     Ok(Count { words })
/// }
/// # let _ = word_count_tool();
/// ```
///
/// # Errors
///
/// At compile time, on the attribute or the function: a missing, empty or
/// malformed `id`, an unknown or repeated argument, a plain `fn` without
/// `blocking`, `blocking` on an `async fn`, a method, a generic function, or
/// a function that doesn't take one or two parameters. The function goes at
/// module level; methods go in a [`macro@tools`] block.
#[proc_macro_attribute]
pub fn tool(attr: TokenStream, item: TokenStream) -> TokenStream {
    tool::expand(attr.into(), item.into()).into()
}

/// Declares a guardrail whose check is this function: keeps the function,
/// and adds `fn <name>_guardrail() -> kindgi::Guardrail` with the same
/// visibility.
///
/// It goes on a plain `fn name(config: Config, trace: RunTrace) -> R`, where
/// `Config` is `Deserialize + JsonSchema` (its schema becomes the
/// guardrail's `configSchema`) and `R` is a `CheckResult`, a `bool`, or a
/// `Result` of either.
///
/// ```
/// use kindgi::{CheckResult, RunTrace};
/// use schemars::JsonSchema;
/// use serde::Deserialize;
///
/// #[derive(Deserialize, JsonSchema)]
/// #[serde(rename_all = "camelCase")]
/// struct Config { min_length: usize }
///
/// #[kindgi::check(
///     id = "acme.min-length",
///     check_id = "acme.checks.min-length",
///     on_violation = "halt",
///     severity = "error",
/// )]
/// fn min_length(config: Config, trace: RunTrace) -> CheckResult {
///     let len = trace.output_text().unwrap_or("").trim().chars().count();
///     if len >= config.min_length { CheckResult::pass() } else { CheckResult::fail("too short") }
/// }
///
/// let guardrail = min_length_guardrail(); // a kindgi::Guardrail, ready for Pack::guardrail
/// assert_eq!(guardrail.id(), "acme.min-length");
/// ```
///
/// `min_length_guardrail()` is:
///
/// ```text
/// kindgi::Guardrail::new("acme.min-length")
///     .check_id("acme.checks.min-length")
///     .on_violation(kindgi::OnViolation::Halt)
///     .severity(kindgi::Severity::Error)
///     .evaluate(min_length)
/// ```
///
/// # Arguments
///
/// | argument | builder call |
/// | --- | --- |
/// | `id = "acme.min-length"` (required) | `Guardrail::new("acme.min-length")` |
/// | `check_id = "..."` | `.check_id("...")` |
/// | `name = "..."` | `.name("...")`, else the doc comment's first line |
/// | `on_violation = "halt"` (required) | `.on_violation(OnViolation::Halt)` |
/// | `severity = "error"` | `.severity(Severity::Error)` |
/// | `kind = "zero-llm"` | `.kind(GuardrailKind::ZeroLlm)` (the default) |
///
/// `on_violation`, `severity` and `kind` take the wire spelling of a
/// built-in value (`halt`, `retry`, `escalate`, `log-only`, `compensate`;
/// `info`, `warn`, `error`, `critical`; `zero-llm`, `llm-judge`,
/// `external`), checked at compile time; another value is chained on the
/// generated function: `.on_violation(kindgi::OnViolation::other("page"))`.
/// `id` and `check_id` are checked at compile time like a tool's id. The
/// scope, config and other index fields are chained on the generated
/// function: `min_length_guardrail().config(json!({"minLength": 20}))`.
///
/// # Errors
///
/// At compile time: a missing, empty or malformed `id` (or `check_id`), a
/// missing or empty `on_violation`, an `on_violation`, `severity` or `kind`
/// that isn't a built-in value, an unknown or repeated argument, an
/// `async fn`, a method, a generic function, or a function that doesn't take
/// exactly two parameters.
#[proc_macro_attribute]
pub fn check(attr: TokenStream, item: TokenStream) -> TokenStream {
    check::expand(attr.into(), item.into()).into()
}

/// Declares tools that share state: an `impl` block whose `#[tool(...)]`
/// methods are tool handlers taking `&self`. The block stays as written
/// (without the `#[tool]` attributes), and gains
/// `fn <method>_tool(self: &Arc<Self>) -> kindgi::Tool` for each tool and
/// `fn tools(self) -> Vec<kindgi::Tool>` for all of them, every tool
/// sharing the one value (a pool, settings, a client). Both are `pub`,
/// whatever the methods' own visibility: the methods stay callable as
/// written, the tools are what the pack is built from.
///
/// Each `#[tool(...)]` takes the arguments of [`macro@tool`]; the method's
/// doc comment is the description. A method is `async fn name(&self, input:
/// Input) -> Result<Output, E>`, with `ctx: ToolContext` after the input
/// when it needs the call's context, or a plain `fn` with `blocking`.
///
/// ```
/// use std::path::PathBuf;
/// use kindgi::{Pack, ToolContext, ToolError};
/// use schemars::JsonSchema;
/// use serde::{Deserialize, Serialize};
///
/// #[derive(Deserialize, JsonSchema)]
/// struct NewTicket { subject: String }
/// #[derive(Serialize, JsonSchema)]
/// struct Logged { ticket_id: String }
///
/// struct Desk { database: PathBuf }
///
/// #[kindgi::tools]
/// impl Desk {
///     /// Logs a customer's request as a ticket.
///     #[tool(id = "support.log-ticket", blocking)]
///     fn log_ticket(&self, input: NewTicket, ctx: ToolContext) -> Result<Logged, ToolError> {
///         // … write to self.database, keyed by ctx.idempotency_key() …
///         # let _ = (&self.database, ctx);
///         Ok(Logged { ticket_id: format!("T-{}", input.subject.len()) })
///     }
///
///     /// Says which database the desk writes to.
///     #[tool(id = "support.where", mutating = false)]
///     async fn database(&self, _input: serde_json::Map<String, serde_json::Value>) -> Result<String, ToolError> {
///         Ok(self.database.display().to_string())
///     }
/// }
///
/// let desk = Desk { database: "desk.db".into() };
/// let pack = Pack::new().with_tools(desk.tools());
/// assert_eq!(pack.tools().len(), 2);
/// ```
///
/// State the tools change goes behind a lock that a panic doesn't leave
/// unusable: a handler's panic is answered `handler-throw` and the service
/// goes on, but a `std::sync::Mutex` it held stays poisoned, and
/// `.lock().unwrap()` would fail every later call of every tool sharing it
/// until restart. Take the guard back with
/// `.lock().unwrap_or_else(std::sync::PoisonError::into_inner)`, or use a
/// lock that doesn't poison; the `kindgi` crate's guide ("Tools that share
/// state") shows it.
///
/// # Errors
///
/// At compile time: arguments on `#[tools]` itself, a trait or generic
/// `impl`, a block with no `#[tool]` method, a method that doesn't take
/// `&self` and one or two parameters, and every error of [`macro@tool`].
#[proc_macro_attribute]
pub fn tools(attr: TokenStream, item: TokenStream) -> TokenStream {
    tools::expand(attr.into(), item.into()).into()
}
