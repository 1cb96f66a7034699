//! `stress.environ`: what of its process environment pack code can see.
//!
//! It answers whether a needle is there, never the values themselves, so a
//! test can look for the pack token without the answer carrying it.

use kindgi::{Tool, ToolContext, ToolError};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// What to look for.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct EnvironInput {
    /// Bytes to look for in every name and value.
    #[schemars(length(min = 1))]
    needle: String,
}

/// What the handler's process shows.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct EnvironOutput {
    /// Every variable name, sorted.
    names: Vec<String>,
    /// Whether the needle is in a name or value of `std::env::vars_os`.
    in_env: bool,
    /// Whether the needle is in the bytes of `/proc/self/environ`
    /// (`false` where there is no such file).
    in_proc_environ: bool,
}

async fn environ(input: EnvironInput, _ctx: ToolContext) -> Result<EnvironOutput, ToolError> {
    let needle = input.needle.as_bytes();
    let mut names = Vec::new();
    let mut in_env = false;
    for (name, value) in std::env::vars_os() {
        in_env |=
            contains(name.as_encoded_bytes(), needle) || contains(value.as_encoded_bytes(), needle);
        names.push(name.to_string_lossy().into_owned());
    }
    names.sort();
    let in_proc_environ = std::fs::read("/proc/self/environ")
        .map(|bytes| contains(&bytes, needle))
        .unwrap_or(false);
    Ok(EnvironOutput {
        names,
        in_env,
        in_proc_environ,
    })
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

pub(crate) fn tool() -> Tool {
    Tool::new("stress.environ")
        .description(
            "Lists its process's variable names and says whether needle is in its environment.",
        )
        .mutating(false)
        .handler(environ)
}
