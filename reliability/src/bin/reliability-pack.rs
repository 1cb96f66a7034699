//! The stress pack, as a binary of this package for its tests.

use std::process::ExitCode;

fn main() -> ExitCode {
    kindgi_stress_pack::pack().run()
}
