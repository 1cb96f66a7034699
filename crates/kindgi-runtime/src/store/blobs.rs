//! The content-addressed blob directory: `blobs/<first two hex>/<sha256>`.
//!
//! A blob is written to `tmp/`, fsynced, renamed into place and its folder
//! fsynced before any record names it, so a crash mid-upload leaves at most
//! a stray temporary file (swept at the next start), never a record
//! pointing at a missing blob.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

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
}
