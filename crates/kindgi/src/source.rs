//! Where a primitive is declared: the source file behind its `modulePath`.

/// The source file that declares a primitive: the index's `modulePath`.
///
/// `Tool::new`, `Guardrail::new`, `Agent::new` and `Flow::new` take it from
/// the line that calls them (`#[track_caller]`), so a pack names none. The
/// path is the file's from its crate's `src/` (or `tests/`, `benches/`)
/// folder on: `src/tools/echo.rs`. [`here!`](crate::here) captures the
/// declaring crate's folder as well, for a file outside those folders; pass
/// it with `.source(kindgi::here!())`.
///
/// ```
/// let source = kindgi::here!();
/// assert!(source.module_path().ends_with(".rs"));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SourceFile {
    file: &'static str,
    manifest_dir: Option<&'static str>,
}

impl SourceFile {
    /// Made by [`here!`](crate::here): `file!()` and the declaring crate's
    /// `CARGO_MANIFEST_DIR`.
    #[doc(hidden)]
    pub const fn __new(file: &'static str, manifest_dir: &'static str) -> Self {
        Self {
            file,
            manifest_dir: Some(manifest_dir),
        }
    }

    /// The file of the code that called the function this is called in
    /// (which must be `#[track_caller]` too).
    #[track_caller]
    pub fn caller() -> Self {
        Self {
            file: std::panic::Location::caller().file(),
            manifest_dir: None,
        }
    }

    /// The file relative to the pack root (the crate that declares it), with
    /// forward slashes: `src/tools/echo.rs`.
    pub fn module_path(&self) -> String {
        match self.manifest_dir {
            Some(manifest_dir) => module_path_of(self.file, manifest_dir),
            None => module_path_from_src(self.file),
        }
    }
}

/// `file` from its crate's `src/` folder on (else `tests/` or `benches/`),
/// the same wherever the crate was built from: rustc names a file from the
/// folder cargo ran in, so a workspace member's is
/// `examples/pack/src/a.rs`, a lone crate's `src/a.rs`, a path
/// dependency's absolute. A file in none of those folders keeps its name.
fn module_path_from_src(file: &str) -> String {
    let file = file.replace('\\', "/");
    let parts: Vec<&str> = file
        .split('/')
        .filter(|p| !p.is_empty() && *p != ".")
        .collect();
    let start = ["src", "tests", "benches"].iter().find_map(|folder| {
        parts[..parts.len().saturating_sub(1)]
            .iter()
            .position(|p| p == folder)
    });
    match start {
        Some(start) => parts[start..].join("/"),
        None => parts
            .last()
            .map_or_else(String::new, |name| (*name).to_owned()),
    }
}

/// Captures the [`SourceFile`] of the code that calls it.
#[macro_export]
macro_rules! here {
    () => {
        $crate::SourceFile::__new(::core::file!(), ::core::env!("CARGO_MANIFEST_DIR"))
    };
}

/// `file` relative to the crate at `manifest_dir`.
///
/// rustc names a file relative to the directory cargo ran it in: the
/// workspace root for a workspace member (`fixtures/pack/src/a.rs`), the
/// crate itself for a lone crate (`src/a.rs`), or an absolute path for a
/// dependency outside the workspace. The longest tail of the manifest
/// directory that prefixes the file is the crate's place in its workspace.
fn module_path_of(file: &str, manifest_dir: &str) -> String {
    let file = file.replace('\\', "/");
    let manifest_dir = manifest_dir.replace('\\', "/");
    let manifest_dir = manifest_dir.trim_end_matches('/');
    if let Some(rest) = file.strip_prefix(manifest_dir)
        && let Some(rest) = rest.strip_prefix('/')
    {
        return rest.to_owned();
    }
    let parts: Vec<&str> = manifest_dir.split('/').filter(|p| !p.is_empty()).collect();
    for k in (1..=parts.len()).rev() {
        let tail = parts[parts.len() - k..].join("/");
        if let Some(rest) = file.strip_prefix(&tail)
            && let Some(rest) = rest.strip_prefix('/')
        {
            return rest.to_owned();
        }
    }
    file.trim_start_matches("./").to_owned()
}

#[cfg(test)]
mod tests {
    use super::{module_path_from_src, module_path_of};

    #[test]
    fn from_the_src_folder_on() {
        for (file, path) in [
            (
                "examples/support-desk/src/tools/echo.rs",
                "src/tools/echo.rs",
            ),
            ("src/main.rs", "src/main.rs"),
            ("/home/me/pack/src/a/b.rs", "src/a/b.rs"),
            ("crates/kindgi/tests/files.rs", "tests/files.rs"),
            ("pack\\src\\a.rs", "src/a.rs"),
            ("./src/tests/x.rs", "src/tests/x.rs"),
            ("/tmp/doctest/bundle.rs", "bundle.rs"),
        ] {
            assert_eq!(module_path_from_src(file), path, "{file}");
        }
    }

    #[test]
    fn workspace_member() {
        assert_eq!(
            module_path_of(
                "fixtures/conformance-pack/src/tools/echo.rs",
                "/work/main/fixtures/conformance-pack"
            ),
            "src/tools/echo.rs"
        );
    }

    #[test]
    fn lone_crate_and_absolute_and_windows() {
        assert_eq!(
            module_path_of("src/tools/a.rs", "/home/me/pack"),
            "src/tools/a.rs"
        );
        assert_eq!(
            module_path_of("/home/me/pack/src/a.rs", "/home/me/pack"),
            "src/a.rs"
        );
        assert_eq!(
            module_path_of("pack\\src\\a.rs", "C:\\work\\pack"),
            "src/a.rs"
        );
    }
}
