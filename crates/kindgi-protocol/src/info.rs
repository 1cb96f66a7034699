//! The answer to `GET /v1/info`.

use serde::{Deserialize, Serialize};

use crate::ProtocolV2;

/// The answer to `GET /v1/info`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Info {
    /// Always 2.
    pub protocol: ProtocolV2,
    /// The pack's id.
    pub pack_id: String,
    /// The pack's version.
    pub pack_version: String,
    /// The artifact version of the index being served.
    pub artifact_version: String,
    /// Every tool the service runs.
    pub tools: Vec<InfoTool>,
    /// Every check id the service runs (`checkId`, else the guardrail's id).
    pub checks: Vec<String>,
    /// The index's required env names this process lacks, sorted.
    #[serde(default)]
    pub missing_env: Vec<String>,
    /// `sha256:` and the hex SHA-256 of the index file (protocol 2.7.0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index_hash: Option<String>,
}

/// A tool in [`Info::tools`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InfoTool {
    /// The tool's id.
    pub id: String,
    /// The tool's version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
}
