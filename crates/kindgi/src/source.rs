//! Where a primitive is declared: the source file behind its `modulePath`.

/// The source file that declares a primitive, captured at compile time by
/// [`here!`](crate::here) (or by the attribute macros, which call it).
///
/// ```
/// let source = kindgi::here!();
/// assert!(source.module_path().ends_with(".rs"));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SourceFile {
    file: &'static str,
    manifest_dir: &'static str,
}

impl SourceFile {
    /// Made by [`here!`](crate::here): `file!()` and the declaring crate's
    /// `CARGO_MANIFEST_DIR`.
    #[doc(hidden)]
    pub const fn __new(file: &'static str, manifest_dir: &'static str) -> Self {
        Self { file, manifest_dir }
    }

    /// The file relative to the pack root (the crate that declares it), with
    /// forward slashes: `src/tools/echo.rs`.
    pub fn module_path(&self) -> String {
        module_path_of(self.file, self.manifest_dir)
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
    use super::module_path_of;

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
