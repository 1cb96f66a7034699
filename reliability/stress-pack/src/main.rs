//! The stress pack's binary: `stress-pack index …` / `stress-pack serve …`.

use std::process::ExitCode;

fn main() -> ExitCode {
    kindgi_stress_pack::pack().run()
}
