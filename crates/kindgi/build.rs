//! Tells a pack's build script where the boot layout is: `layout/boot.ld`,
//! a linker script laying the code a pack service runs as it starts and
//! answers its first call together in the binary (see
//! `bench/boot-layout`). A package depending on `kindgi` reads its path
//! from `DEP_KINDGI_BOOT_LAYOUT`; it is given for Linux targets only, whose
//! linkers (GNU ld, LLD) take such a script.

use std::env;
use std::path::Path;

fn main() {
    println!("cargo::rerun-if-changed=layout/boot.ld");
    if !env::var("CARGO_CFG_TARGET_OS").is_ok_and(|os| os == "linux") {
        return;
    }
    let crate_dir = env::var("CARGO_MANIFEST_DIR").unwrap_or_default();
    let script = Path::new(&crate_dir).join("layout").join("boot.ld");
    // A comma would split the linker argument `-Wl,-T,PATH`.
    if let Some(path) = script.to_str().filter(|path| !path.contains(',')) {
        println!("cargo::metadata=boot_layout={path}");
    }
}
