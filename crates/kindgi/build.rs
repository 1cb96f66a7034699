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
    let linux = env::var("CARGO_CFG_TARGET_OS").is_ok_and(|os| os == "linux");
    let Ok(crate_dir) = env::var("CARGO_MANIFEST_DIR") else {
        return;
    };
    let script = Path::new(&crate_dir).join("layout").join("boot.ld");
    // A comma would split the linker argument `-Wl,-T,PATH`.
    match script.to_str() {
        Some(path) if linux && !path.contains(',') => {
            println!("cargo::metadata=boot_layout={path}");
        }
        _ => {}
    }
}
