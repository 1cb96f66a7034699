//! The protocol version marker.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The protocol version every message carries in `v`.
pub const PROTOCOL_VERSION: u64 = 2;

/// The schema version of the protocol this crate implements.
pub const SCHEMA_VERSION: &str = "2.10.0";

/// The constant `v: 2` of every protocol message: serializes as `2` and
/// refuses anything else when deserialized.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct ProtocolV2;

impl Serialize for ProtocolV2 {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_u64(PROTOCOL_VERSION)
    }
}

impl<'de> Deserialize<'de> for ProtocolV2 {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let v = u64::deserialize(deserializer)?;
        if v == PROTOCOL_VERSION {
            Ok(ProtocolV2)
        } else {
            Err(serde::de::Error::custom(format!(
                "expected protocol v2, got {v}"
            )))
        }
    }
}
