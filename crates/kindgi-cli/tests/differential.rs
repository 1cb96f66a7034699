//! End to end: `kindgi differential` sends its corpus to two real services
//! of the conformance fixture pack. Against itself every probe is the same;
//! a reference indexed with another artifact version differs exactly where
//! that version shows, and an accepted-differences document accepts those
//! lines, while an entry that never occurs is stale.

mod fixture;

use std::process::{Command, Output};

const KINDGI: &str = env!("CARGO_BIN_EXE_kindgi");

/// The fixture's index command, with `version` as its artifact version
/// (`None`: the run's pin).
fn index_command(version: Option<&str>) -> String {
    let binary = fixture::fixture_binary(KINDGI);
    let pack = fixture::fixture_dir();
    format!(
        "'{}' index --pack-dir '{}' --output {{out}} --artifact-version {} --published-at {{publishedAt}}",
        binary.display(),
        pack.display(),
        version.unwrap_or("{artifactVersion}")
    )
}

/// `kindgi differential` of the fixture against the fixture indexed with
/// `reference_version`, with `extra` arguments.
fn differential(reference_version: Option<&str>, extra: &[&str]) -> (Output, Vec<String>) {
    let binary = fixture::fixture_binary(KINDGI);
    let serve = format!("'{}' serve", binary.display());
    let pack = fixture::fixture_dir().display().to_string();
    let out = Command::new(KINDGI)
        .arg("differential")
        .args(["--serve-command", &serve])
        .args(["--index-command", &index_command(None)])
        .args(["--pack-dir", &pack])
        .args(["--reference-serve-command", &serve])
        .args([
            "--reference-index-command",
            &index_command(reference_version),
        ])
        .args(["--reference-pack-dir", &pack])
        .args(extra)
        .output()
        .expect("kindgi differential runs");
    let lines = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_owned)
        .collect();
    (out, lines)
}

/// The probe ids, from `--list`.
fn probes() -> Vec<String> {
    let out = Command::new(KINDGI)
        .args(["differential", "--list"])
        .output()
        .expect("kindgi differential --list runs");
    assert!(out.status.success(), "{out:?}");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_owned)
        .collect()
}

#[test]
fn a_service_against_itself_is_the_same_on_every_probe() {
    let ids = probes();
    assert_eq!(ids.first().map(String::as_str), Some("boot"));
    assert!(ids.iter().any(|id| id == "stop"));
    let (out, lines) = differential(None, &[]);
    let text = lines.join("\n");
    assert!(out.status.success(), "{out:?}\n{text}");
    let expected: Vec<String> = ids
        .iter()
        .map(|id| format!("same {id}"))
        .chain([format!("{} same, 0 accepted, 0 differ", ids.len())])
        .collect();
    assert_eq!(lines, expected);
}

#[test]
fn differences_are_named_accepted_by_the_document_or_stale() {
    let (out, lines) = differential(Some("20990101.1"), &[]);
    let text = lines.join("\n");
    assert_eq!(out.status.code(), Some(1), "{text}");
    for line in [
        "same http.healthz",
        "differ tool.echo header kindgi-artifact-version: ours \"20261001.7\", the reference's \"20990101.1\"",
        "differ tool.echo records /0/artifactVersion: ours \"20261001.7\", the reference's \"20990101.1\"",
        "differ http.info body /artifactVersion: ours \"20261001.7\", the reference's \"20990101.1\"",
        "differ boot records /1/artifactVersion: ours \"20261001.7\", the reference's \"20990101.1\"",
    ] {
        assert!(
            lines.iter().any(|l| l == line),
            "no line {line:?} in\n{text}"
        );
    }

    let dir = tempfile::tempdir().expect("temp dir");
    let document = dir.path().join("DIFFERENCES.md");
    std::fs::write(
        &document,
        "# Accepted\n\n| probe | part | why |\n|---|---|---|\n\
         | `*` | header kindgi-artifact-version | indexed with another version |\n\
         | `*` | records /*/artifactVersion | indexed with another version |\n\
         | `http.info` | body | indexed with another version |\n\
         | `env.missing.info` | body /artifactVersion | indexed with another version |\n\
         | `tenant.info` | body | indexed with another version |\n\
         | `http.404` | status | never differs |\n",
    )
    .expect("write the document");
    let (out, lines) = differential(
        Some("20990101.1"),
        &["--accepted", &document.display().to_string()],
    );
    let text = lines.join("\n");
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        lines.iter().any(|l| l
            == "accepted tool.echo header kindgi-artifact-version: indexed with another version"),
        "{text}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l == "accepted boot records /*/artifactVersion: indexed with another version"),
        "{text}"
    );
    // Narrowed to one place, an entry leaves the rest of the body compared.
    let differ: Vec<&String> = lines.iter().filter(|l| l.starts_with("differ ")).collect();
    assert_eq!(differ.len(), 1, "{text}");
    assert!(
        differ[0].starts_with("differ env.missing.info body /indexHash: ours \"sha256:"),
        "{text}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l == "stale http.404 status: accepted, but the services agree"),
        "{text}"
    );
    let summary = lines.last().expect("a summary");
    assert!(
        summary.ends_with(", 1 differ, 1 stale"),
        "the summary: {summary}"
    );
}

#[test]
fn a_bad_accepted_document_is_refused_with_its_line() {
    let dir = tempfile::tempdir().expect("temp dir");
    let document = dir.path().join("DIFFERENCES.md");
    std::fs::write(&document, "| `http.info` | bodies | why |\n").expect("write");
    let (out, _) = differential(None, &["--accepted", &document.display().to_string()]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).trim(),
        format!(
            "kindgi: {}: line 1: \"bodies\" is not a part: status, body [pointer], records [pointer] or header <content-type|retry-after|kindgi-duration-ms|kindgi-artifact-version>",
            document.display()
        )
    );
}
