//! `{{name}} index` writes the pack's index; `{{name}} serve` runs its
//! pack service (`kindgi dev` runs both for you while you work).

fn main() -> std::process::ExitCode {
    {{crate}}::pack().run()
}
