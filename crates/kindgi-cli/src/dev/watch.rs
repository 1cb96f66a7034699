//! Noticing saves: the pack's `Cargo.toml`, `build.rs`, every file under
//! `src/`, and its local values (`.env`, `.kindgi/secrets.env`,
//! `.kindgi/connections.env`), polled for changes of modification time or
//! size.
//!
//! Polling a few dozen files every 300 ms costs nothing and needs no
//! platform file-watching API; an editor that writes several files in one
//! save is seen as one change, since a change is only reported once a poll
//! finds nothing new.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use super::local::{CONNECTIONS, DOTENV, SECRETS};

/// What a poll saw: each watched file's modification time and size.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Snapshot(BTreeMap<PathBuf, (Option<SystemTime>, u64)>);

impl Snapshot {
    /// The watched files of the pack at `pack_dir` as they are now.
    pub(crate) fn take(pack_dir: &Path) -> Self {
        let mut files = BTreeMap::new();
        for name in ["Cargo.toml", "build.rs", DOTENV, SECRETS, CONNECTIONS] {
            record(&pack_dir.join(name), &mut files);
        }
        walk(&pack_dir.join("src"), &mut files, 0);
        Self(files)
    }
}

fn record(path: &Path, files: &mut BTreeMap<PathBuf, (Option<SystemTime>, u64)>) {
    if let Ok(meta) = std::fs::metadata(path) {
        files.insert(path.to_path_buf(), (meta.modified().ok(), meta.len()));
    }
}

/// Editors' swap, backup and lock files aren't the pack's source.
fn ignored(name: &str) -> bool {
    name.starts_with('.') || name.ends_with('~') || name.ends_with(".swp") || name.ends_with(".tmp")
}

fn walk(dir: &Path, files: &mut BTreeMap<PathBuf, (Option<SystemTime>, u64)>, depth: usize) {
    // Deep enough for any real source tree; a symlink loop stops here.
    if depth > 16 {
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        if ignored(&name.to_string_lossy()) {
            continue;
        }
        let path = entry.path();
        match entry.file_type() {
            Ok(kind) if kind.is_dir() => walk(&path, files, depth + 1),
            Ok(_) => record(&path, files),
            Err(_) => {}
        }
    }
}

/// Polls the pack every `interval` and calls `changed` once per save,
/// until `changed` answers `false`.
pub(crate) async fn watch(
    pack_dir: PathBuf,
    interval: Duration,
    mut changed: impl FnMut() -> bool,
) {
    let take = |dir: PathBuf| async move {
        tokio::task::spawn_blocking(move || Snapshot::take(&dir))
            .await
            .unwrap_or_default()
    };
    let mut last = take(pack_dir.clone()).await;
    loop {
        tokio::time::sleep(interval).await;
        let now = take(pack_dir.clone()).await;
        if now == last {
            continue;
        }
        // Settle: wait until a poll sees no further change (at most ~3 s).
        let mut settled = now;
        for _ in 0..10 {
            tokio::time::sleep(interval).await;
            let again = take(pack_dir.clone()).await;
            if again == settled {
                break;
            }
            settled = again;
        }
        last = settled;
        if !changed() {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sees_source_and_manifest_changes_but_not_editor_files() {
        let dir = tempfile::tempdir().expect("dir");
        let root = dir.path();
        std::fs::create_dir_all(root.join("src/tools")).expect("mkdir");
        std::fs::write(root.join("Cargo.toml"), "[package]").expect("write");
        std::fs::write(root.join("src/main.rs"), "fn main() {}").expect("write");
        let before = Snapshot::take(root);
        assert_eq!(before.0.len(), 2);

        std::fs::write(root.join("src/.main.rs.swp"), "x").expect("write");
        std::fs::write(root.join("src/main.rs~"), "x").expect("write");
        std::fs::create_dir_all(root.join("target")).expect("mkdir");
        std::fs::write(root.join("target/out"), "x").expect("write");
        assert_eq!(Snapshot::take(root), before);

        std::fs::write(root.join("src/tools/echo.rs"), "// new").expect("write");
        let added = Snapshot::take(root);
        assert_ne!(added, before);

        std::fs::write(root.join("src/tools/echo.rs"), "// longer now").expect("write");
        assert_ne!(Snapshot::take(root), added);

        let edited = Snapshot::take(root);
        std::fs::create_dir_all(root.join(".kindgi")).expect("mkdir");
        std::fs::write(root.join(".kindgi/secrets.env"), "A=1").expect("write");
        let with_secrets = Snapshot::take(root);
        assert_ne!(with_secrets, edited);
        std::fs::write(root.join(".env"), "B=2").expect("write");
        assert_ne!(Snapshot::take(root), with_secrets);
    }
}
