//! `support.no-card-numbers`: halts a run whose output shows what looks
//! like a payment card number (a run of digits passing the Luhn check).
//!
//! The output is read on its own: a trace whose other parts aren't the
//! shape expected (`toolCalls: null`) is still checked.

use kindgi::{CheckResult, Guardrail, RunTrace};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How long a run of digits must be to count as a card number.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CardConfig {
    /// The fewest digits a card number has.
    #[serde(default = "thirteen")]
    #[schemars(range(min = 12, max = 19))]
    pub min_digits: usize,
}

fn thirteen() -> usize {
    13
}

/// Whether `digits` pass the Luhn checksum.
pub fn luhn(digits: &[u8]) -> bool {
    let sum: u32 = digits
        .iter()
        .rev()
        .enumerate()
        .map(|(i, &d)| {
            let d = u32::from(d);
            if i % 2 == 1 {
                let doubled = d * 2;
                if doubled > 9 { doubled - 9 } else { doubled }
            } else {
                d
            }
        })
        .sum();
    !digits.is_empty() && sum.is_multiple_of(10)
}

/// Runs of digits in `text`, spaces and dashes between them allowed.
fn digit_runs(text: &str) -> Vec<Vec<u8>> {
    let mut runs = Vec::new();
    let mut run: Vec<u8> = Vec::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if let Some(d) = c.to_digit(10) {
            run.push(d as u8);
        } else if (c == ' ' || c == '-')
            && !run.is_empty()
            && chars.peek().is_some_and(char::is_ascii_digit)
        {
            continue;
        } else if !run.is_empty() {
            runs.push(std::mem::take(&mut run));
        }
    }
    if !run.is_empty() {
        runs.push(run);
    }
    runs
}

/// Whether `text` shows a card number of at least `min_digits` digits.
pub fn has_card_number(text: &str, min_digits: usize) -> bool {
    digit_runs(text)
        .iter()
        .any(|run| (min_digits..=19).contains(&run.len()) && luhn(run))
}

/// Whether the run's output — text, or every string in it when it is
/// structured — shows a card number.
#[kindgi::check(
    id = "support.no-card-numbers",
    name = "No card numbers",
    on_violation = "halt",
    severity = "error"
)]
pub fn no_card_numbers(config: CardConfig, trace: RunTrace) -> CheckResult {
    if trace
        .output_strings()
        .any(|text| has_card_number(text, config.min_digits))
    {
        CheckResult::fail("the output shows what looks like a payment card number")
    } else {
        CheckResult::pass()
    }
}

/// The guardrail.
pub fn guardrail() -> Guardrail {
    no_card_numbers_guardrail()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_card_numbers_with_separators() {
        assert!(has_card_number("card 4111 1111 1111 1111 on file", 13));
        assert!(has_card_number("4111-1111-1111-1111", 13));
        assert!(!has_card_number("order 4111 1111 1111 1112", 13));
        assert!(!has_card_number("ticket T-000042, call 555-0100", 13));
    }
}
