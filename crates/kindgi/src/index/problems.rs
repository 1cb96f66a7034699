//! What is wrong with a pack: every problem the indexer (or a test pack's
//! boot) found, as one error.

use std::fmt;

/// Every problem found with a pack, its manifest or its index, each naming
/// what it is about (the primitive, its file) and the fix — the words of
/// the `index` command's output and of the `boot-failed` record.
///
/// ```
/// let problems = kindgi::index::parse_pack_config("[package]\nname = 'p'\n", "Cargo.toml")
///     .expect_err("no [package.metadata.kindgi]");
/// assert_eq!(problems.problems().len(), 1);
/// assert!(problems.to_string().starts_with("The pack has 1 problem: "));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PackProblems(Vec<String>);

impl PackProblems {
    /// The problems, in the order found; never empty.
    #[must_use]
    pub fn problems(&self) -> &[String] {
        &self.0
    }

    /// The problems, owned.
    #[must_use]
    pub fn into_vec(self) -> Vec<String> {
        self.0
    }
}

impl From<Vec<String>> for PackProblems {
    fn from(problems: Vec<String>) -> Self {
        Self(problems)
    }
}

impl IntoIterator for PackProblems {
    type Item = String;
    type IntoIter = std::vec::IntoIter<String>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

impl<const N: usize> PartialEq<[&str; N]> for PackProblems {
    fn eq(&self, other: &[&str; N]) -> bool {
        self.0.iter().map(String::as_str).eq(other.iter().copied())
    }
}

impl fmt::Display for PackProblems {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let count = self.0.len();
        let noun = if count == 1 { "problem" } else { "problems" };
        write!(f, "The pack has {count} {noun}: {}", self.0.join("; "))
    }
}

impl std::error::Error for PackProblems {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn problems_read_as_one_sentence() {
        let problems = PackProblems::from(vec!["a is wrong".to_owned(), "b too".to_owned()]);
        assert_eq!(
            problems.to_string(),
            "The pack has 2 problems: a is wrong; b too"
        );
        assert_eq!(problems, ["a is wrong", "b too"]);
        assert_eq!(problems.into_vec(), ["a is wrong", "b too"]);
    }
}
