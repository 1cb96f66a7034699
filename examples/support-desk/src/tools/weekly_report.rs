//! `support.weekly-report`: the tenant's tickets by priority as a PDF (a
//! table, on as many pages as it needs), stored with the runtime's files
//! (protocol 2.10.0) and returned in the output's `files`.

use std::path::PathBuf;

use kindgi::{FileValue, StoreOutcome, Tool, ToolContext, ToolError};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::{Settings, db, pdf};

/// The report's title.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReportInput {
    /// The title on the page.
    #[serde(default = "default_title")]
    #[schemars(length(min = 1, max = 120))]
    pub title: String,
}

fn default_title() -> String {
    "Support desk report".to_owned()
}

/// The stored report.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ReportOutput {
    /// The report, as a stored file.
    pub files: Vec<FileValue>,
    /// How many tickets it counts.
    pub tickets: u64,
}

async fn weekly_report(
    database: PathBuf,
    input: ReportInput,
    ctx: ToolContext,
) -> Result<ReportOutput, ToolError> {
    // Fail before the work when the call can't store what it makes.
    let files = ctx.files()?;
    let tenant = ctx.tenant_id().to_owned();
    let counts = tokio::task::spawn_blocking(move || {
        db::open(&database).and_then(|db| db::counts_by_priority(&db, &tenant))
    })
    .await??;
    let tickets = counts.iter().map(|(_, n)| n).sum();
    let bytes = pdf::render(&pdf::Report {
        title: &input.title,
        text: "The workspace's tickets, by priority.",
        headings: ["Priority", "Tickets"],
        rows: &counts,
    });
    match files
        .store(bytes, "support-report.pdf", "application/pdf")
        .await?
    {
        StoreOutcome::File(file) => Ok(ReportOutput {
            files: vec![file],
            tickets,
        }),
        StoreOutcome::NotStored(why) => Err(ToolError::new(
            "NotStored",
            format!("the runtime didn't store the report: {why}"),
        )),
    }
}

/// The tool.
pub fn tool(settings: &Settings) -> Tool {
    let database = settings.database.clone();
    Tool::new("support.weekly-report")
        .description("Renders the tenant's tickets by priority as a PDF report.")
        .stores_files()
        .handler(move |input: ReportInput, ctx: ToolContext| {
            weekly_report(database.clone(), input, ctx)
        })
}
