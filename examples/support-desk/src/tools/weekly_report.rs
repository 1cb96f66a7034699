//! `support.weekly-report`: the tenant's tickets by priority as a one-page
//! PDF, stored with the runtime's files (protocol 2.10.0) and returned in
//! the output's `files`.

use std::path::PathBuf;

use kindgi::{FileValue, Stored, Tool, ToolContext, ToolError};
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

/// The report's lines: one per priority, and the total.
pub fn report_lines(counts: &[(String, u64)]) -> Vec<String> {
    let total: u64 = counts.iter().map(|(_, n)| n).sum();
    let mut lines: Vec<String> = counts
        .iter()
        .map(|(priority, n)| format!("{priority}: {n} ticket{}", if *n == 1 { "" } else { "s" }))
        .collect();
    lines.push(String::new());
    lines.push(format!("Total: {total}"));
    lines
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
    let bytes = pdf::render(&input.title, &report_lines(&counts));
    match files
        .store(bytes, "support-report.pdf", "application/pdf")
        .await?
    {
        Stored::File(file) => Ok(ReportOutput {
            files: vec![file],
            tickets,
        }),
        Stored::NotStored(why) => Err(ToolError::new(
            "NotStored",
            format!("the runtime didn't store the report: {why:?}"),
        )),
    }
}

/// The tool.
pub fn tool(settings: &Settings) -> Tool {
    let database = settings.database.clone();
    Tool::new("support.weekly-report")
        .description("Renders the tenant's tickets by priority as a one-page PDF report.")
        .stores_files()
        .handler(move |input: ReportInput, ctx: ToolContext| {
            weekly_report(database.clone(), input, ctx)
        })
}
