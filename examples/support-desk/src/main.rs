//! The `support` pack's binary: `support-desk index` writes its index,
//! `support-desk serve` runs its pack service.

use std::process::ExitCode;

fn main() -> ExitCode {
    support_desk::pack(&support_desk::Settings::from_env()).run()
}
