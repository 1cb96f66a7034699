//! Tool files (protocol 2.10.0): the stored file value and the runtime's
//! answers to a store or a read.

use serde::{Deserialize, Serialize};

/// A stored file as a value (`{"type":"kindgi.file", …}`): what a tool
/// returns in its output's top-level `files` array.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FileValue {
    /// Always `kindgi.file`.
    #[serde(rename = "type")]
    pub kind: FileValueType,
    /// The stored file's id (its blob id).
    #[schemars(length(min = 1))]
    pub artifact_id: String,
    /// The file's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Its type, as checked from its bytes.
    pub content_type: String,
    /// Its size in bytes.
    pub size: u64,
    /// SHA-256 of its bytes, lowercase hex.
    #[schemars(regex(pattern = r"^[0-9a-f]{64}$"))]
    pub sha256: String,
    /// A PDF's page count, as checked from its bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub pages: Option<u32>,
    /// Why a model isn't shown it, when it isn't.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_shown: Option<String>,
}

/// The constant `"kindgi.file"` tag of a [`FileValue`]; a value of another
/// type isn't a stored file.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[non_exhaustive]
pub enum FileValueType {
    /// `kindgi.file`.
    #[default]
    #[serde(rename = "kindgi.file")]
    KindgiFile,
}

open_set! {
    /// Why the runtime stored nothing. A reason a newer runtime adds reads
    /// as `Other`.
    NotStored {
        /// Not a type a model is shown, or the bytes aren't the type they claim.
        Type = "type",
        /// Over its type's limit, or a body past 10 MB.
        Size = "size",
        /// The call has stored 10 files.
        Limit = "limit",
        /// The tenant's storage is full.
        Storage = "storage",
    }
}

open_set! {
    /// Why the runtime read nothing. A reason a newer runtime adds reads
    /// as `Other`.
    NotRead {
        /// The call's run may not be shown a file of that id.
        Rule = "rule",
        /// Deleted, or its bytes are missing.
        Gone = "gone",
        /// Its bytes aren't the ones that were checked.
        Changed = "changed",
        /// Over its type's limit.
        Size = "size",
    }
}

/// The JSON answer (200) to `POST /v1/tool-files`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
#[non_exhaustive]
pub enum StoreAnswer {
    /// `{"file": …}`: stored (or the same bytes stored before in this call).
    Stored {
        /// The stored file.
        file: FileValue,
    },
    /// `{"notStored": …}`: nothing stored, and why.
    NotStored {
        /// Why.
        #[serde(rename = "notStored")]
        not_stored: NotStored,
    },
}

/// The JSON answer (200) to `GET /v1/tool-files/{artifactId}` when no bytes
/// come back.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReadAnswer {
    /// Why nothing was read.
    #[serde(rename = "notRead")]
    pub not_read: NotRead,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn store_answers_round_trip() {
        let stored: StoreAnswer = serde_json::from_str(
            r#"{"file":{"type":"kindgi.file","artifactId":"a1","contentType":"image/png","size":3,"sha256":"00"}}"#,
        )
        .expect("file answer");
        assert!(matches!(stored, StoreAnswer::Stored { .. }));
        let not: StoreAnswer = serde_json::from_str(r#"{"notStored":"storage"}"#).expect("answer");
        assert_eq!(
            not,
            StoreAnswer::NotStored {
                not_stored: NotStored::Storage
            }
        );
    }

    #[test]
    fn a_newer_runtimes_reasons_read_as_other() {
        let not: StoreAnswer = serde_json::from_str(r#"{"notStored":"quota"}"#).expect("answer");
        let StoreAnswer::NotStored { not_stored } = &not else {
            panic!("not a refusal: {not:?}");
        };
        assert!(matches!(not_stored, NotStored::Other(_)));
        assert_eq!(not_stored.as_str(), "quota");
        assert_eq!(
            serde_json::to_string(&not).expect("json"),
            r#"{"notStored":"quota"}"#
        );
        let read: ReadAnswer = serde_json::from_str(r#"{"notRead":"legal-hold"}"#).expect("answer");
        assert_eq!(read.not_read, NotRead::other("legal-hold"));
        let read: ReadAnswer = serde_json::from_str(r#"{"notRead":"gone"}"#).expect("answer");
        assert_eq!(read.not_read, NotRead::Gone);
        for reason in NotStored::BUILT_IN {
            assert_eq!(NotStored::parse(reason.as_str()).as_ref(), Some(reason));
        }
        assert_eq!(
            NotRead::built_in_names(),
            "\"rule\", \"gone\", \"changed\" or \"size\""
        );
    }
}
