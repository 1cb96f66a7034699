//! Noticing saves: every file the last build used, as cargo's dep-info
//! lists them (path dependencies included, the registry's sources not),
//! the `Cargo.toml`, `build.rs` and `src/` of every path package in the
//! build, the enclosing workspace's manifest, and the pack's local values
//! (`.env`, `.kindgi/secrets.env`, `.kindgi/connections.env`), polled for
//! changes of modification time or size.
//!
//! Until a build has said what it used, the pack folder's `Cargo.toml`,
//! `build.rs` and `src/` are watched. Polling a few hundred files every
//! 300 ms costs little and needs no platform file-watching API; an editor
//! that writes several files in one save is seen as one change, since a
//! change is only reported once a poll finds nothing new.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use tokio::sync::watch as signal;

use super::local::{CONNECTIONS, DOTENV, SECRETS};

/// What the watcher polls.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Watched {
    /// Files, each polled whether it exists or not.
    files: BTreeSet<PathBuf>,
    /// Folders, every file below them polled.
    trees: BTreeSet<PathBuf>,
    /// When the build that named these files started: a file first
    /// watched now that changed after that may have changed after the
    /// build read it.
    since: Option<SystemTime>,
}

impl Watched {
    /// The pack folder's own files: its package's, and its local values.
    pub(crate) fn pack(pack_dir: &Path) -> Self {
        let mut watched = Self::default();
        watched.package(pack_dir);
        for name in [DOTENV, SECRETS, CONNECTIONS] {
            watched.files.insert(pack_dir.join(name));
        }
        watched
    }

    /// A package's `Cargo.toml`, `build.rs` and `src/`.
    pub(crate) fn package(&mut self, dir: &Path) {
        self.files.insert(dir.join("Cargo.toml"));
        self.files.insert(dir.join("build.rs"));
        self.trees.insert(dir.join("src"));
    }

    /// One file.
    pub(crate) fn file(&mut self, path: PathBuf) {
        self.files.insert(path);
    }

    /// Everything `other` watches, too.
    pub(crate) fn extend(&mut self, other: &Watched) {
        self.files.extend(other.files.iter().cloned());
        self.trees.extend(other.trees.iter().cloned());
    }

    /// Marks these as named by a build that started at `since`.
    pub(crate) fn named_at(mut self, since: SystemTime) -> Self {
        self.since = Some(since);
        self
    }

    /// Whether the two watch the same files.
    pub(crate) fn same_files(&self, other: &Watched) -> bool {
        self.files == other.files && self.trees == other.trees
    }

    /// Whether `path` is one of these files, or below one of these folders.
    fn covers(&self, path: &Path) -> bool {
        self.files.contains(path) || self.trees.iter().any(|tree| path.starts_with(tree))
    }
}

/// What a poll saw: each watched file's modification time and size.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Snapshot(BTreeMap<PathBuf, (Option<SystemTime>, u64)>);

impl Snapshot {
    /// The `watched` files as they are now.
    pub(crate) fn take(watched: &Watched) -> Self {
        let mut files = BTreeMap::new();
        for file in &watched.files {
            record(file, &mut files);
        }
        for tree in &watched.trees {
            walk(tree, &mut files, 0);
        }
        Self(files)
    }

    /// What to compare `now` with once the watched files changed from
    /// `before` to `after`: the files watched before as they were last
    /// seen, so that a change during the build still counts; the files
    /// new to the watch as they are now, unless they changed since the
    /// build that named them started.
    fn rebased(&self, before: &Watched, after: &Watched, now: &Snapshot) -> Self {
        let mut base: BTreeMap<_, _> = self
            .0
            .iter()
            .filter(|(path, _)| after.covers(path))
            .map(|(path, state)| (path.clone(), *state))
            .collect();
        for (path, state) in &now.0 {
            if self.0.contains_key(path) || before.covers(path) {
                continue;
            }
            let touched =
                matches!((state.0, after.since), (Some(modified), Some(since)) if modified > since);
            if !touched {
                base.insert(path.clone(), *state);
            }
        }
        Self(base)
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

/// Polls the files `watched` names every `interval`, taking up each new
/// set a build sends, and calls `changed` once per save, until `changed`
/// answers `false`.
pub(crate) async fn watch(
    mut watched: signal::Receiver<Arc<Watched>>,
    interval: Duration,
    mut changed: impl FnMut() -> bool,
) {
    let take = |files: Arc<Watched>| async move {
        tokio::task::spawn_blocking(move || Snapshot::take(&files))
            .await
            .unwrap_or_default()
    };
    let mut files = Arc::clone(&watched.borrow_and_update());
    let mut last = take(Arc::clone(&files)).await;
    loop {
        tokio::time::sleep(interval).await;
        if watched.has_changed().unwrap_or(false) {
            let after = Arc::clone(&watched.borrow_and_update());
            let now = take(Arc::clone(&after)).await;
            last = last.rebased(&files, &after, &now);
            files = after;
        }
        let now = take(Arc::clone(&files)).await;
        if now == last {
            continue;
        }
        // Settle: wait until a poll sees no further change (at most ~3 s).
        let mut settled = now;
        for _ in 0..10 {
            tokio::time::sleep(interval).await;
            let again = take(Arc::clone(&files)).await;
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
        let watched = Watched::pack(root);
        std::fs::create_dir_all(root.join("src/tools")).expect("mkdir");
        std::fs::write(root.join("Cargo.toml"), "[package]").expect("write");
        std::fs::write(root.join("src/main.rs"), "fn main() {}").expect("write");
        let before = Snapshot::take(&watched);
        assert_eq!(before.0.len(), 2);

        std::fs::write(root.join("src/.main.rs.swp"), "x").expect("write");
        std::fs::write(root.join("src/main.rs~"), "x").expect("write");
        std::fs::create_dir_all(root.join("target")).expect("mkdir");
        std::fs::write(root.join("target/out"), "x").expect("write");
        assert_eq!(Snapshot::take(&watched), before);

        std::fs::write(root.join("src/tools/echo.rs"), "// new").expect("write");
        let added = Snapshot::take(&watched);
        assert_ne!(added, before);

        std::fs::write(root.join("src/tools/echo.rs"), "// longer now").expect("write");
        assert_ne!(Snapshot::take(&watched), added);

        let edited = Snapshot::take(&watched);
        std::fs::create_dir_all(root.join(".kindgi")).expect("mkdir");
        std::fs::write(root.join(".kindgi/secrets.env"), "A=1").expect("write");
        let with_secrets = Snapshot::take(&watched);
        assert_ne!(with_secrets, edited);
        std::fs::write(root.join(".env"), "B=2").expect("write");
        assert_ne!(Snapshot::take(&watched), with_secrets);
    }

    #[test]
    fn files_a_build_names_are_watched_from_then_on() {
        let dir = tempfile::tempdir().expect("dir");
        let pack = dir.path().join("pack");
        let helper = dir.path().join("helper/src/lib.rs");
        let data = dir.path().join("data/words.txt");
        std::fs::create_dir_all(pack.join("src")).expect("mkdir");
        std::fs::create_dir_all(helper.parent().expect("parent")).expect("mkdir");
        std::fs::create_dir_all(data.parent().expect("parent")).expect("mkdir");
        std::fs::write(pack.join("src/main.rs"), "fn main() {}").expect("write");
        std::fs::write(&helper, "pub fn f() {}").expect("write");
        std::fs::write(&data, "a b").expect("write");

        let before = Watched::pack(&pack);
        let last = Snapshot::take(&before);
        assert!(!Snapshot::take(&before).0.contains_key(&helper));

        // A build named the helper crate and a file it includes.
        let mut after = Watched::pack(&pack);
        after.package(&dir.path().join("helper"));
        after.file(data.clone());
        let after = after.named_at(SystemTime::now() + Duration::from_secs(60));
        let now = Snapshot::take(&after);
        let base = last.rebased(&before, &after, &now);
        assert_eq!(base, now, "files new to the watch start as they are");
        std::fs::write(&data, "a b c").expect("edit");
        assert_ne!(Snapshot::take(&after), base);

        // A file new to the watch that changed after its build started
        // counts as changed; an edit during the build to a file watched
        // before counts too.
        let during = after.clone().named_at(SystemTime::UNIX_EPOCH);
        let base = last.rebased(&before, &during, &now);
        assert_ne!(base, now);
        std::fs::write(pack.join("src/main.rs"), "fn main() { }").expect("edit");
        let edited = Snapshot::take(&after);
        assert_ne!(last.rebased(&before, &after, &edited), edited);
    }
}
