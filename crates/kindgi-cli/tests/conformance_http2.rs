//! End to end: `kindgi conformance --http2` runs the suite's HTTP cases over
//! h2c against the real conformance fixture pack, and says so; without the
//! flag the same cases run over HTTP/1.1.

mod fixture;

use std::path::PathBuf;
use std::process::Command;

const KINDGI: &str = env!("CARGO_BIN_EXE_kindgi");

/// The cases run: the HTTP surface's (a few seconds each way).
const ONLY: &str = "http.";

/// The fixture pack's binary, built if need be.
fn fixture_binary() -> PathBuf {
    fixture::fixture_binary(KINDGI)
}

/// Every case's id, from `kindgi conformance --list`.
fn case_ids() -> Vec<String> {
    let out = Command::new(KINDGI)
        .args(["conformance", "--list"])
        .output()
        .expect("kindgi conformance --list runs");
    assert!(out.status.success(), "{out:?}");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|line| line.split('\t').next().map(str::to_owned))
        .collect()
}

/// `kindgi conformance` on the fixture, `--only http.`, with `extra`: its
/// stdout lines, once it has exited 0 (no case failed).
fn conformance(extra: &[&str]) -> Vec<String> {
    let binary = fixture_binary();
    let (bin, pack) = (
        binary.display(),
        fixture::fixture_dir().display().to_string(),
    );
    let out = Command::new(KINDGI)
        .arg("conformance")
        .args(["--serve-command", &format!("'{bin}' serve")])
        .args([
            "--index-command",
            &format!(
                "'{bin}' index --pack-dir '{pack}' --output {{out}} \
                 --artifact-version {{artifactVersion}} --published-at {{publishedAt}}"
            ),
        ])
        .args(["--pack-dir", &pack, "--only", ONLY])
        .args(extra)
        .output()
        .expect("kindgi conformance runs");
    assert!(
        out.status.success(),
        "exit {}\nstdout:\n{}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_owned)
        .collect()
}

/// How many cases are under `--only http.`, and how many are not.
fn counts() -> (usize, usize) {
    let ids = case_ids();
    let http = ids.iter().filter(|id| id.starts_with(ONLY)).count();
    assert!(http > 10, "the HTTP cases: {ids:?}");
    (http, ids.len() - http)
}

#[test]
fn http2_runs_the_cases_over_h2c_and_says_so() {
    let (http, others) = counts();
    let lines = conformance(&["--http2"]);
    let text = lines.join("\n");
    assert_eq!(
        lines.first().map(String::as_str),
        Some("transport: h2c (HTTP/2 over cleartext with prior knowledge)"),
        "{text}"
    );
    for line in [
        "pass http.413.content-length",
        "skip http.413.chunked: HTTP/1.1 only, not run over h2c: HTTP/2 has no chunked transfer-encoding",
        "pass http.invoke-headers",
    ] {
        assert!(
            lines.iter().any(|l| l == line),
            "no line {line:?} in\n{text}"
        );
    }
    assert_eq!(
        lines.last(),
        Some(&format!(
            "{} passed, 0 failed, {} skipped",
            http - 1,
            others + 1
        )),
        "{text}"
    );
}

#[test]
fn without_http2_the_cases_run_over_http1() {
    let (http, others) = counts();
    let lines = conformance(&[]);
    let text = lines.join("\n");
    assert_eq!(
        lines.first().map(String::as_str),
        Some("transport: HTTP/1.1"),
        "{text}"
    );
    assert!(lines.iter().any(|l| l == "pass http.413.chunked"), "{text}");
    assert_eq!(
        lines.last(),
        Some(&format!("{http} passed, 0 failed, {others} skipped")),
        "{text}"
    );
}
