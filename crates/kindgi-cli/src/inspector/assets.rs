//! The page, built by Vite from `inspector/` and embedded in the binary,
//! so that an install needs no Node. The file names are fixed (no content
//! hashes), so a rebuild of unchanged sources gives the same files.

/// One embedded file: its path under `/inspector/`, its type, its bytes.
struct Asset {
    path: &'static str,
    content_type: &'static str,
    bytes: &'static [u8],
}

/// Every file of `inspector/dist`.
const ASSETS: &[Asset] = &[
    Asset {
        path: "index.html",
        content_type: "text/html; charset=utf-8",
        bytes: include_bytes!("../../inspector/dist/index.html"),
    },
    Asset {
        path: "assets/inspector.js",
        content_type: "text/javascript; charset=utf-8",
        bytes: include_bytes!("../../inspector/dist/assets/inspector.js"),
    },
    Asset {
        path: "assets/inspector.css",
        content_type: "text/css; charset=utf-8",
        bytes: include_bytes!("../../inspector/dist/assets/inspector.css"),
    },
    Asset {
        path: "assets/pdf.worker.min.mjs",
        content_type: "text/javascript; charset=utf-8",
        bytes: include_bytes!("../../inspector/dist/assets/pdf.worker.min.mjs"),
    },
];

/// The file at `path` (relative to `/inspector/`; empty is the page):
/// its type and bytes.
pub(crate) fn asset(path: &str) -> Option<(&'static str, &'static [u8])> {
    let path = if path.is_empty() { "index.html" } else { path };
    ASSETS
        .iter()
        .find(|a| a.path == path)
        .map(|a| (a.content_type, a.bytes))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn files(dir: &Path, under: &str, out: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir).expect("dist folder").flatten() {
            let name = format!("{under}{}", entry.file_name().to_string_lossy());
            if entry.path().is_dir() {
                files(&entry.path(), &format!("{name}/"), out);
            } else {
                out.push(name);
            }
        }
    }

    #[test]
    fn every_built_file_is_embedded() {
        let dist = Path::new(env!("CARGO_MANIFEST_DIR")).join("inspector/dist");
        let mut built = Vec::new();
        files(&dist, "", &mut built);
        built.sort();
        let mut embedded: Vec<String> = ASSETS.iter().map(|a| a.path.to_owned()).collect();
        embedded.sort();
        assert_eq!(built, embedded);
        let (kind, page) = asset("").expect("the page");
        assert_eq!(kind, "text/html; charset=utf-8");
        assert!(String::from_utf8_lossy(page).contains("assets/inspector.js"));
        assert_eq!(asset("nope.js"), None);
    }
}
