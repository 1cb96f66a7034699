//! The records the store keeps, as the rest of the runtime sees them.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What opening (or re-opening) a call asks for.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OpenCall {
    /// The run the call belongs to.
    pub run_id: String,
    /// The tenant the run is for.
    pub tenant_id: String,
    /// The project of the run.
    #[serde(default)]
    pub project_id: Option<String>,
    /// The tool called.
    pub tool_id: String,
    /// The call's idempotency key: opening a call with a key its run already
    /// has re-runs that call (a new token, a new link to the same wait).
    #[serde(default)]
    pub idempotency_key: Option<String>,
    /// Whether the call may store files.
    #[serde(default)]
    pub store: bool,
    /// Whether the call may read files its run may be shown.
    #[serde(default)]
    pub read: bool,
    /// Whether the tool declares `pauses` (the call gets a wait link).
    #[serde(default)]
    pub pauses: bool,
    /// The call's deadline, relative, in milliseconds.
    #[serde(default)]
    pub deadline_ms: Option<u64>,
    /// The tool's output schema: what a wait's answer must be valid against.
    #[serde(default)]
    pub output_schema: Option<Value>,
}

/// Why a call could not be opened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OpenRefusal {
    /// The run has ended.
    RunEnded,
    /// The run exists for another tenant or project.
    RunMismatch,
}

/// An opened call: what its tool is handed.
#[derive(Debug, Clone)]
pub struct OpenedCall {
    /// The call's id.
    pub call_id: String,
    /// Whether this re-ran a call the run already had.
    pub rerun: bool,
    /// The tool-files token, when the call stores or reads files.
    pub token: Option<String>,
    /// The wait's id and the new link's secret path segment, when it pauses.
    pub wait: Option<(String, String)>,
}

/// Why a token no longer works.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Closed {
    /// The call has answered.
    Answered,
    /// Its deadline has passed.
    Deadline,
    /// Its run has ended.
    RunEnded,
}

/// A matched tool-files token with its call's circumstances.
#[derive(Debug, Clone)]
pub struct TokenView {
    /// The call.
    pub call_id: String,
    /// The call's run.
    pub run_id: String,
    /// The run's tenant.
    pub tenant_id: String,
    /// The run's project.
    pub project_id: Option<String>,
    /// May store.
    pub can_store: bool,
    /// May read.
    pub can_read: bool,
    /// Closed, and why.
    pub closed: Option<Closed>,
    /// The tenant's state (`active`, `closing`, `suspended`, `unavailable`).
    pub tenant_state: String,
    /// Whether the project is suspended.
    pub project_suspended: bool,
    /// The secret's hash, to compare against.
    pub(crate) secret_hash: Vec<u8>,
}

/// A stored file's record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileRecord {
    /// Its id.
    pub artifact_id: String,
    /// The call that stored it.
    pub call_id: String,
    /// The run that owns it.
    pub run_id: String,
    /// The run's tenant.
    pub tenant_id: String,
    /// Its name.
    pub name: Option<String>,
    /// Its type, from its bytes.
    pub content_type: String,
    /// Its size.
    pub size: u64,
    /// SHA-256 of its bytes, lowercase hex.
    pub sha256: String,
    /// A PDF's page count.
    pub pages: Option<u32>,
    /// Whether it was deleted.
    pub deleted: bool,
}

impl FileRecord {
    /// The record as a file value.
    pub fn to_value(&self) -> kindgi_protocol::FileValue {
        kindgi_protocol::FileValue {
            kind: kindgi_protocol::FileValueType::KindgiFile,
            artifact_id: self.artifact_id.clone(),
            name: self.name.clone(),
            content_type: self.content_type.clone(),
            size: self.size,
            sha256: self.sha256.clone(),
            pages: self.pages,
            not_shown: None,
        }
    }
}

/// What inserting a file record did.
#[derive(Debug, Clone)]
pub enum Inserted {
    /// A new record.
    Stored(FileRecord),
    /// The same bytes were stored before in this call: that record.
    Existing(FileRecord),
    /// The call already stored its limit of files.
    Limit,
    /// The tenant's storage is full.
    Storage,
}

/// A wait's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum WaitState {
    /// The tool has its link but hasn't paused yet.
    Open,
    /// The tool paused; the run waits for the answer.
    Waiting,
    /// The answer came.
    Completed,
    /// The wait's time passed without an answer.
    TimedOut,
}

impl WaitState {
    pub(crate) fn parse(s: &str) -> Self {
        match s {
            "waiting" => Self::Waiting,
            "completed" => Self::Completed,
            "timed-out" => Self::TimedOut,
            _ => Self::Open,
        }
    }

    /// Whether the wait is over.
    pub fn is_final(self) -> bool {
        matches!(self, Self::Completed | Self::TimedOut)
    }
}

/// A wait as the dev API shows it.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WaitRecord {
    /// The wait's id.
    pub id: String,
    /// The call that waits.
    pub call_id: String,
    /// Its state.
    pub state: WaitState,
    /// What the run waits for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// When it times out (Unix milliseconds), once paused.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeout_at_ms: Option<u64>,
    /// The answer, once completed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output: Option<Value>,
    /// The tool's output schema the answer is checked against.
    #[serde(skip)]
    pub output_schema: Option<Value>,
}

/// What completing a wait did.
#[derive(Debug, Clone)]
pub enum Completion {
    /// This answer completed it.
    Completed(WaitRecord),
    /// It was complete already; nothing changed.
    AlreadyComplete(WaitRecord),
    /// Its time had passed.
    TimedOut(WaitRecord),
}

/// A tenant's settings, as the dev API sets them.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TenantSettings {
    /// `active`, `closing`, `suspended` or `unavailable` (its state can't be read).
    #[serde(default)]
    pub state: Option<String>,
    /// Its storage quota in bytes.
    #[serde(default)]
    pub quota_bytes: Option<u64>,
}
