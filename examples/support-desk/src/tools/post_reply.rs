//! `support.post-reply`: posts a reply on a ticket in the team's helpdesk
//! app, through the `helpdesk` connection (protocol 2.9.0).
//!
//! The app's base URL comes from the call's env (`HELPDESK_URL`, declared
//! in `needsSpec.env`), else from the process env. When the app refuses the
//! connection's token (401) the tool answers `connection-rejected`: the
//! runtime renews the token once and runs the call again.

use std::time::Instant;

use kindgi::protocol::percent::encode_component;
use kindgi::{EffectKind, Tool, ToolContext, ToolError};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

/// The tool's name for its connection.
pub const CONNECTION: &str = "helpdesk";

/// The reply to post.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PostReplyInput {
    /// The ticket's id in the helpdesk.
    #[schemars(length(min = 1))]
    pub ticket_id: String,
    /// The reply's text.
    #[schemars(length(min = 1))]
    pub message: String,
    /// Whether the customer sees it (`false`: an internal note).
    #[serde(default = "yes")]
    pub public: bool,
}

fn yes() -> bool {
    true
}

/// The posted reply.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PostedReply {
    /// The reply's id in the helpdesk.
    pub reply_id: String,
}

/// What the helpdesk answers a new reply.
#[derive(Debug, Deserialize)]
struct HelpdeskReply {
    id: serde_json::Value,
}

/// The helpdesk's base URL for this call.
fn base_url(ctx: &ToolContext) -> Result<String, ToolError> {
    ctx.env("HELPDESK_URL")
        .map(str::to_owned)
        .or_else(|| kindgi::env::var("HELPDESK_URL"))
        .filter(|url| !url.trim().is_empty())
        .map(|url| url.trim().trim_end_matches('/').to_owned())
        .ok_or_else(|| ToolError::new("ConfigError", "HELPDESK_URL is not set"))
}

/// Posts a reply on a ticket in the helpdesk app.
#[kindgi::tool(id = "support.post-reply")]
pub async fn post_reply(input: PostReplyInput, ctx: ToolContext) -> Result<PostedReply, ToolError> {
    let helpdesk = ctx.require_connection(CONNECTION)?;
    let url = format!(
        "{}/api/tickets/{}/replies",
        base_url(&ctx)?,
        encode_component(&input.ticket_id)
    );
    let time_left = ctx.deadline().saturating_duration_since(Instant::now());
    let mut request = reqwest::Client::new()
        .post(&url)
        .bearer_auth(helpdesk.access_token.expose())
        .timeout(time_left)
        .json(&json!({"body": input.message, "public": input.public}));
    // The helpdesk drops a repeat of the same reply: a re-run posts once.
    if let Some(key) = ctx.idempotency_key() {
        request = request.header("Idempotency-Key", key);
    }
    let response = request.send().await.map_err(|e| e.without_url())?;
    let status = response.status();
    if status == reqwest::StatusCode::UNAUTHORIZED {
        return Err(ToolError::connection_rejected(CONNECTION));
    }
    if !status.is_success() {
        let body = response.text().await.unwrap_or_default();
        let body: String = body.chars().take(200).collect();
        return Err(ToolError::new(
            "HelpdeskError",
            format!("the helpdesk answered {status}: {body}"),
        ));
    }
    let reply: HelpdeskReply = response.json().await.map_err(|e| e.without_url())?;
    let reply_id = match reply.id {
        serde_json::Value::String(id) => id,
        other => other.to_string(),
    };
    Ok(PostedReply { reply_id })
}

/// The tool, with what it touches and needs.
pub fn tool() -> Tool {
    post_reply_tool()
        .effect(EffectKind::ExternalSideEffect, Some("helpdesk tickets"))
        .needs_connection(CONNECTION, "acme-helpdesk", &["tickets.write"])
        .needs_env(
            "HELPDESK_URL",
            json!({"type": "string", "description": "The helpdesk API's base URL"}),
        )
}
