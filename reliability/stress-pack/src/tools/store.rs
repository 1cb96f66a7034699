//! `stress.store`: stores a text file through the call's files.

use kindgi::{FileValue, StoreOutcome, Tool, ToolContext, ToolError};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The file to store.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct StoreInput {
    /// Its bytes, as UTF-8 text.
    text: String,
    /// Its name.
    #[serde(default)]
    name: String,
}

/// The stored file, or why nothing was stored.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct StoreOutput {
    /// The file stored by this call.
    files: Vec<FileValue>,
    /// Why nothing was stored.
    #[serde(skip_serializing_if = "Option::is_none")]
    not_stored: Option<String>,
}

async fn store(input: StoreInput, ctx: ToolContext) -> Result<StoreOutput, ToolError> {
    let files = ctx.files()?;
    match files
        .store(input.text.into_bytes(), &input.name, "text/plain")
        .await?
    {
        StoreOutcome::File(file) => Ok(StoreOutput {
            files: vec![file],
            not_stored: None,
        }),
        StoreOutcome::NotStored(why) => Ok(StoreOutput {
            files: Vec::new(),
            not_stored: Some(format!("{why:?}")),
        }),
    }
}

pub(crate) fn tool() -> Tool {
    Tool::new("stress.store")
        .description("Stores text as a file through the call's files, and returns it.")
        .stores_files()
        .reads_files()
        .handler(store)
}
