//! Where the binaries under test are.

use std::path::{Path, PathBuf};

/// The stress pack's folder (`reliability/stress-pack`), which `index`
/// reads its `Cargo.toml` from.
pub fn stress_pack_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("stress-pack")
}

/// The `kindgi` binary of `crates/kindgi-cli`: `$KINDGI_BIN`, else
/// `kindgi` in the target folder of the running executable (a test binary
/// lives in `target/<profile>/deps/`, a binary in `target/<profile>/`).
///
/// `cargo test --workspace` builds it before running any test, because
/// `kindgi-cli` has integration tests of its own; for `cargo test -p
/// kindgi-reliability` alone, build it first with `cargo build -p
/// kindgi-cli`.
///
/// # Panics
///
/// When no such binary exists, with what to do about it.
pub fn kindgi_bin() -> PathBuf {
    if let Some(path) = std::env::var_os("KINDGI_BIN") {
        return PathBuf::from(path);
    }
    let exe = std::env::current_exe().expect("the running executable's path");
    let mut dir = exe.parent().map(Path::to_path_buf).unwrap_or_default();
    if dir.ends_with("deps") {
        dir.pop();
    }
    let candidate = dir.join(format!("kindgi{}", std::env::consts::EXE_SUFFIX));
    assert!(
        candidate.is_file(),
        "no kindgi binary at {}: run `cargo build -p kindgi-cli` (cargo test --workspace builds it), or set KINDGI_BIN",
        candidate.display()
    );
    candidate
}

/// A binary next to the running executable (for `kindgi-stress`, which
/// runs `stress-pack` from the same `target/<profile>/` folder).
pub fn sibling(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("the running executable's path");
    let mut dir = exe.parent().map(Path::to_path_buf).unwrap_or_default();
    if dir.ends_with("deps") {
        dir.pop();
    }
    dir.join(format!("{name}{}", std::env::consts::EXE_SUFFIX))
}
