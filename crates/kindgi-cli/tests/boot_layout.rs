//! A pack from `kindgi new` links its release build with kindgi's boot
//! layout, and its debug build without: the code a pack service runs as it
//! starts lies together in one output section, `.text.kindgi_boot`, before
//! the rest of the text. The release build here is a profile inheriting
//! `release` without its optimizations (the build script sees `release`
//! all the same), read with binutils' `readelf` and `nm`.

#![cfg(target_os = "linux")]

mod dev_session;

use std::path::Path;
use std::process::Command;

use dev_session::{target_dir, workspace};

/// `cargo build` of the pack with `args`, into the workspace's target.
fn cargo_build(pack: &Path, target: &Path, args: &[&str]) {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let built = Command::new(cargo)
        .args(["build", "--offline", "-q"])
        .args(args)
        .current_dir(pack)
        .env("CARGO_TARGET_DIR", target)
        .output()
        .expect("cargo build runs");
    assert!(
        built.status.success(),
        "{}",
        String::from_utf8_lossy(&built.stderr)
    );
}

fn binutils(tool: &str, args: &[&str], binary: &Path) -> String {
    let out = Command::new(tool)
        .args(args)
        .arg(binary)
        .output()
        .unwrap_or_else(|e| panic!("{tool} runs (binutils): {e}"));
    assert!(out.status.success(), "{tool}: {out:?}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The address range of a section, from `readelf -SW`.
fn section(binary: &Path, name: &str) -> Option<(u64, u64)> {
    binutils("readelf", &["-SW"], binary)
        .lines()
        .find_map(|line| {
            let line = line.split_once(']').map_or(line, |(_, rest)| rest);
            let mut fields = line.split_whitespace();
            (fields.next()? == name).then_some(())?;
            let _type = fields.next()?;
            let address = u64::from_str_radix(fields.next()?, 16).ok()?;
            let _offset = fields.next()?;
            let size = u64::from_str_radix(fields.next()?, 16).ok()?;
            Some((address, address + size))
        })
}

/// How many of `kindgi::service`'s functions lie in `range`, and outside.
fn service_functions(binary: &Path, range: std::ops::Range<u64>) -> (usize, usize) {
    let (mut inside, mut outside) = (0, 0);
    for line in binutils("nm", &["--defined-only"], binary).lines() {
        let mut fields = line.split_whitespace();
        let (Some(address), Some("t" | "T"), Some(name)) =
            (fields.next(), fields.next(), fields.next())
        else {
            continue;
        };
        let Ok(address) = u64::from_str_radix(address, 16) else {
            continue;
        };
        if name.starts_with("_ZN6kindgi7service") {
            if range.contains(&address) {
                inside += 1;
            } else {
                outside += 1;
            }
        }
    }
    (inside, outside)
}

#[test]
fn a_new_pack_links_its_release_build_with_the_boot_layout() {
    let root = workspace();
    let target = target_dir(&root);
    let tmp = tempfile::tempdir().expect("temp dir");
    let kindgi = root.join("crates/kindgi");
    let created = Command::new(env!("CARGO_BIN_EXE_kindgi"))
        .args(["new", "layout-pack", "--kindgi-path"])
        .arg(&kindgi)
        .current_dir(tmp.path())
        .output()
        .expect("kindgi new runs");
    assert!(created.status.success(), "{created:?}");
    let pack = tmp.path().join("layout-pack");
    std::fs::copy(root.join("Cargo.lock"), pack.join("Cargo.lock")).expect("lock file");

    cargo_build(
        &pack,
        &target,
        &[
            "--config",
            "profile.layout-check.inherits='release'",
            "--config",
            "profile.layout-check.opt-level=0",
            "--config",
            "profile.layout-check.lto=false",
            "--config",
            "profile.layout-check.codegen-units=256",
            "--profile",
            "layout-check",
        ],
    );
    let release = target.join("layout-check/layout-pack");
    let (start, end) = section(&release, ".text.kindgi_boot").expect(".text.kindgi_boot");
    let (text, _) = section(&release, ".text").expect(".text");
    assert!(end <= text, "boot {start:x}..{end:x}, text from {text:x}");
    // The service's start-up code is in it, and not the rest of kindgi.
    let (inside, outside) = service_functions(&release, start..end);
    assert!(
        inside >= 20,
        "{inside} of kindgi::service's functions in it"
    );
    assert!(
        outside > 0,
        "all {inside} of kindgi::service's functions in it"
    );

    // A debug build links as it always did: its edit loop stays fast.
    cargo_build(&pack, &target, &[]);
    let debug = target.join("debug/layout-pack");
    assert_eq!(section(&debug, ".text.kindgi_boot"), None);
    assert!(section(&debug, ".text").is_some());
}
