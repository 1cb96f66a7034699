//! The content-addressed blob directory: `blobs/<first two hex>/<sha256>`.
//!
//! A blob is written to `tmp/`, fsynced, renamed into place and its folder
//! fsynced before any record names it, so a crash mid-upload leaves at most
//! a stray temporary file or a blob no record names (both swept at the next
//! start), never a record pointing at a missing blob.

use std::collections::HashSet;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use sha2::{Digest, Sha256};

/// How old a blob no record names must be before [`Blobs::sweep`] removes
/// it: older than any upload between its rename and its record, even one
/// made by another process on the same directory.
const SWEEP_GRACE: Duration = Duration::from_secs(10 * 60);

/// The blob directory of a store.
#[derive(Debug, Clone)]
pub(crate) struct Blobs {
    blobs: PathBuf,
    tmp: PathBuf,
}

impl Blobs {
    /// Opens (creating) `blobs/` and `tmp/` under `root`, sweeping stray
    /// temporary files a crash left behind.
    pub(crate) fn open(root: &Path) -> std::io::Result<Self> {
        let blobs = root.join("blobs");
        let tmp = root.join("tmp");
        fs::create_dir_all(&blobs)?;
        fs::create_dir_all(&tmp)?;
        for entry in fs::read_dir(&tmp)? {
            let _ = fs::remove_file(entry?.path());
        }
        Ok(Self { blobs, tmp })
    }

    /// Where the blob of `sha256` (lowercase hex) lives.
    pub(crate) fn path(&self, sha256: &str) -> PathBuf {
        let shard = sha256.get(..2).unwrap_or("00");
        self.blobs.join(shard).join(sha256)
    }

    /// Writes `bytes` as the blob of `sha256`, durably. A blob already in
    /// place with the right bytes is kept.
    pub(crate) fn write(&self, sha256: &str, bytes: &[u8]) -> std::io::Result<()> {
        let dest = self.path(sha256);
        if let Ok(existing) = fs::read(&dest)
            && hex::encode(Sha256::digest(&existing)) == sha256
        {
            return Ok(());
        }
        let shard = dest.parent().unwrap_or(&self.blobs).to_path_buf();
        fs::create_dir_all(&shard)?;
        let tmp = self
            .tmp
            .join(format!("{sha256}.{}", crate::tokens::random_hex(6)));
        let mut file = fs::File::create(&tmp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        drop(file);
        fs::rename(&tmp, &dest)?;
        fs::File::open(&shard)?.sync_all()?;
        Ok(())
    }

    /// Removes the blobs that are not in `keep` (the sha256 of every file
    /// record not deleted) and were last written more than [`SWEEP_GRACE`]
    /// ago: those of deleted files, and those a crash left between their
    /// rename and their record. Returns how many it removed.
    pub(crate) fn sweep(&self, keep: &HashSet<String>) -> std::io::Result<usize> {
        let now = SystemTime::now();
        let mut removed = 0;
        for shard in fs::read_dir(&self.blobs)? {
            let shard = shard?;
            if !shard.file_type()?.is_dir() {
                continue;
            }
            for blob in fs::read_dir(shard.path())? {
                let blob = blob?;
                let named = blob.file_name().to_str().is_some_and(|n| keep.contains(n));
                let modified = blob.metadata()?.modified()?;
                let old = now.duration_since(modified).unwrap_or_default() > SWEEP_GRACE;
                if !named && old {
                    fs::remove_file(blob.path())?;
                    removed += 1;
                }
            }
        }
        Ok(removed)
    }

    /// The bytes of a blob, `None` when it is missing.
    pub(crate) fn read(&self, sha256: &str) -> std::io::Result<Option<Vec<u8>>> {
        match fs::read(self.path(sha256)) {
            Ok(bytes) => Ok(Some(bytes)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_reads_and_sweeps() -> std::io::Result<()> {
        let dir = tempfile::tempdir()?;
        fs::create_dir_all(dir.path().join("tmp"))?;
        fs::write(dir.path().join("tmp").join("stray"), b"half")?;
        let blobs = Blobs::open(dir.path())?;
        assert_eq!(fs::read_dir(dir.path().join("tmp"))?.count(), 0);
        let sha = hex::encode(Sha256::digest(b"abc"));
        blobs.write(&sha, b"abc")?;
        blobs.write(&sha, b"abc")?;
        assert_eq!(blobs.read(&sha)?, Some(b"abc".to_vec()));
        assert_eq!(blobs.read(&"0".repeat(64))?, None);
        Ok(())
    }

    #[test]
    fn sweeps_old_blobs_no_record_names() -> std::io::Result<()> {
        let dir = tempfile::tempdir()?;
        let blobs = Blobs::open(dir.path())?;
        let sha = |bytes: &[u8]| hex::encode(Sha256::digest(bytes));
        let (kept, stray, fresh) = (sha(b"kept"), sha(b"stray"), sha(b"fresh"));
        blobs.write(&kept, b"kept")?;
        blobs.write(&stray, b"stray")?;
        blobs.write(&fresh, b"fresh")?;
        let long_ago = SystemTime::now() - SWEEP_GRACE - Duration::from_secs(60);
        for old in [&kept, &stray] {
            fs::File::options()
                .write(true)
                .open(blobs.path(old))?
                .set_modified(long_ago)?;
        }
        let keep = HashSet::from([kept.clone()]);
        assert_eq!(blobs.sweep(&keep)?, 1);
        assert_eq!(blobs.read(&kept)?, Some(b"kept".to_vec()));
        assert_eq!(blobs.read(&stray)?, None);
        // Too new to tell from an upload whose record is being written.
        assert_eq!(blobs.read(&fresh)?, Some(b"fresh".to_vec()));
        assert_eq!(blobs.sweep(&keep)?, 0);
        Ok(())
    }
}
