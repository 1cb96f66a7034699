//! Writing the index: canonical bytes, written atomically.

use std::io::Write as _;
use std::path::Path;

use kindgi_protocol::PackIndex;
use kindgi_protocol::canonical::to_canonical_string;
use time::OffsetDateTime;
use time::macros::format_description;

/// The canonical bytes of an index (CONTRACT §6).
pub fn index_bytes(index: &PackIndex) -> Vec<u8> {
    let value = serde_json::to_value(index).unwrap_or_default();
    to_canonical_string(&value).into_bytes()
}

/// Writes `bytes` to `path` so that a reader sees the old file or the new
/// one, never a part: a temporary file in the same folder, flushed to disk,
/// then renamed over `path`.
///
/// # Errors
///
/// A sentence saying what failed; nothing is left half-written.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), String> {
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    if !dir.is_dir() {
        return Err(format!("The output folder {} doesn't exist", dir.display()));
    }
    let mut file =
        temporary_file(dir).map_err(|e| format!("Cannot write in {}: {e}", dir.display()))?;
    file.write_all(bytes)
        .and_then(|()| file.as_file().sync_all())
        .map_err(|e| format!("Cannot write {}: {e}", path.display()))?;
    file.persist(path)
        .map_err(|e| format!("Cannot write {}: {}", path.display(), e.error))?;
    if let Ok(dir) = std::fs::File::open(dir) {
        let _ = dir.sync_all();
    }
    Ok(())
}

/// A temporary file in `dir` with the mode of any file the user writes
/// (`0666` less the umask: `0644` under the usual `022`), not a temporary
/// file's `0600`: an index is copied into images that serve it as another
/// user than the one who wrote it.
fn temporary_file(dir: &Path) -> std::io::Result<tempfile::NamedTempFile> {
    let mut builder = tempfile::Builder::new();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        builder.permissions(std::fs::Permissions::from_mode(0o666));
    }
    builder.tempfile_in(dir)
}

/// Now, as the index's `publishedAt`: ISO 8601 UTC with milliseconds.
pub(crate) fn now_published_at() -> String {
    let format =
        format_description!("[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:3]Z");
    OffsetDateTime::now_utc()
        .format(&format)
        .unwrap_or_else(|_| "1970-01-01T00:00:00.000Z".to_owned())
}

/// The default `artifactVersion`: `YYYYMMDD.N` for today (UTC), N one more
/// than the previous index's of the same day, else 1.
pub(crate) fn next_artifact_version(today: &str, previous: Option<&str>) -> String {
    let n = previous
        .and_then(|v| v.strip_prefix(today))
        .and_then(|rest| rest.strip_prefix('.'))
        .and_then(|n| n.parse::<u64>().ok())
        .map_or(1, |n| n + 1);
    format!("{today}.{n}")
}

/// Today's date (UTC) as `YYYYMMDD`.
pub(crate) fn today() -> String {
    let format = format_description!("[year][month][day]");
    OffsetDateTime::now_utc()
        .format(&format)
        .unwrap_or_else(|_| "19700101".to_owned())
}

/// The `artifactVersion` of the index at `path`, if one is there.
pub(crate) fn previous_artifact_version(path: &Path) -> Option<String> {
    let text = std::fs::read(path).ok()?;
    let value: serde_json::Value = serde_json::from_slice(&text).ok()?;
    value.get("artifactVersion")?.as_str().map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn artifact_versions_count_up_within_a_day() {
        assert_eq!(next_artifact_version("20261130", None), "20261130.1");
        assert_eq!(
            next_artifact_version("20261130", Some("20261130.4")),
            "20261130.5"
        );
        assert_eq!(
            next_artifact_version("20261130", Some("20261129.9")),
            "20261130.1"
        );
        assert_eq!(
            next_artifact_version("20261130", Some("custom")),
            "20261130.1"
        );
    }

    #[test]
    fn published_at_shape() {
        let now = now_published_at();
        assert_eq!(now.len(), 24, "{now}");
        assert!(now.ends_with('Z'));
    }

    #[test]
    fn atomic_write_refuses_missing_folder() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("nope/index.json");
        let err = write_atomically(&path, b"{}").expect_err("no folder");
        assert!(err.starts_with("The output folder "), "{err}");
        let ok = dir.path().join("index.json");
        write_atomically(&ok, b"{}\n").expect("written");
        assert_eq!(std::fs::read(&ok).expect("read"), b"{}\n");
    }

    #[cfg(unix)]
    #[test]
    fn an_index_has_the_mode_of_any_file_the_user_writes() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().expect("tempdir");
        let mode = |name: &str| {
            let meta = std::fs::metadata(dir.path().join(name)).expect("metadata");
            meta.permissions().mode() & 0o777
        };
        std::fs::write(dir.path().join("plain.json"), b"{}").expect("written");
        write_atomically(&dir.path().join("index.json"), b"{}").expect("written");
        assert_eq!(mode("index.json"), mode("plain.json"));
        // Replacing an index keeps that mode.
        write_atomically(&dir.path().join("index.json"), b"{}").expect("written");
        assert_eq!(mode("index.json"), mode("plain.json"));
    }
}
