//! What the tests that serve a pack with `kindgi::serve` share.

use std::path::{Path, PathBuf};

use kindgi::Pack;
use kindgi::index::{PackConfig, Pins, build_index, index_bytes};

/// Writes `pack`'s index (pack `acme` 1.0.0) into `dir`; its path.
pub(crate) fn write_index(pack: &Pack, dir: &Path) -> PathBuf {
    let config = PackConfig {
        id: "acme".to_owned(),
        version: "1.0.0".to_owned(),
        env: None,
    };
    let pins = Pins {
        artifact_version: "20260101.1".to_owned(),
        published_at: "2026-01-01T00:00:00.000Z".to_owned(),
    };
    let index = build_index(pack, &config, &pins).expect("an index");
    let path = dir.join("index.json");
    std::fs::write(&path, index_bytes(&index)).expect("written");
    path
}
