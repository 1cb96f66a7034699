//! Links the release build of the pack service with kindgi's boot layout
//! (on Linux): the code it runs as it starts and answers its first call,
//! laid together in the binary, so that an idle service keeps 2–3 MB
//! less of its code in memory. Only where code lies changes, never what it
//! does. Delete this file to link without it (a linker that takes no
//! linker scripts, such as mold, needs that).

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    // Not in debug builds: the linker matches each of their many sections
    // against the script's patterns, seconds an edit.
    let release = std::env::var("PROFILE").is_ok_and(|p| p == "release");
    if let (true, Ok(script)) = (release, std::env::var("DEP_KINDGI_BOOT_LAYOUT")) {
        println!("cargo::rustc-link-arg-bins=-Wl,-T,{script}");
    }
}
