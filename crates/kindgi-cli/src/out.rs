//! Printing on stdout that a closed pipe (`kindgi call … | head -c1`) only
//! stops, and counts that agree in number.

use std::io::Write;

/// Prints `line` and a newline on stdout. A reader that went away (a closed
/// pipe) or any other write error only stops the printing: what the command
/// did is its exit status, not whether someone read all of its output.
pub(crate) fn say(line: &str) {
    let mut stdout = std::io::stdout().lock();
    let _ = writeln!(stdout, "{line}").and_then(|()| stdout.flush());
}

/// `n` and the noun, in the number `n` asks for: `1 attempt`, `2 attempts`.
pub(crate) fn counted(n: impl Into<u64>, noun: &str) -> String {
    let n = n.into();
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

#[cfg(test)]
mod tests {
    use super::counted;

    #[test]
    fn counts_agree_in_number() {
        assert_eq!(counted(0u32, "attempt"), "0 attempts");
        assert_eq!(counted(1u32, "attempt"), "1 attempt");
        assert_eq!(counted(3u32, "restart"), "3 restarts");
    }
}
