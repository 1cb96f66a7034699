//! The ids nearest to one that isn't there: what a "has no tool" message
//! offers instead.

/// At most this many suggestions.
const MOST: usize = 3;

/// The ids of `ids` near `wanted`, nearest first: those within an edit
/// for every five characters of it (a swapped pair counts one), and those it is the last part of (`greet` for `acme.greet`).
pub(crate) fn nearest<'a>(wanted: &str, ids: impl IntoIterator<Item = &'a str>) -> Vec<&'a str> {
    // One edit in five, at least one (a swapped pair of letters is one).
    let within = (wanted.chars().count() / 5).max(1);
    let mut near: Vec<(usize, &str)> = ids
        .into_iter()
        .filter_map(|id| {
            let edits = strsim::osa_distance(wanted, id);
            let tail = id.rsplit('.').next() == Some(wanted);
            (edits <= within || tail).then_some((if tail { 0 } else { edits }, id))
        })
        .collect();
    near.sort();
    near.dedup();
    near.into_iter().take(MOST).map(|(_, id)| id).collect()
}

/// `; did you mean "a" or "b"?` for the ids near `wanted`, else nothing.
pub(crate) fn did_you_mean<'a>(wanted: &str, ids: impl IntoIterator<Item = &'a str>) -> String {
    let quoted: Vec<String> = nearest(wanted, ids)
        .into_iter()
        .map(|id| format!("\"{id}\""))
        .collect();
    match quoted.as_slice() {
        [] => String::new(),
        [one] => format!("; did you mean {one}?"),
        [init @ .., last] => format!("; did you mean {} or {last}?", init.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const IDS: [&str; 4] = ["acme.greet", "acme.grant", "acme.charge", "other.greet"];

    #[test]
    fn a_typo_and_a_missing_prefix_find_their_tool() {
        assert_eq!(nearest("acme.gret", IDS), ["acme.greet"]);
        assert_eq!(nearest("acme.chrage", IDS), ["acme.charge"]);
        assert_eq!(nearest("greet", IDS), ["acme.greet", "other.greet"]);
        assert!(nearest("zzz.nothing-like-it", IDS).is_empty());
    }

    #[test]
    fn the_hint_reads_as_a_question() {
        assert_eq!(
            did_you_mean("acme.charg", IDS),
            "; did you mean \"acme.charge\"?"
        );
        assert_eq!(
            did_you_mean("greet", IDS),
            "; did you mean \"acme.greet\" or \"other.greet\"?"
        );
        assert_eq!(did_you_mean("nothing.like.it.at.all", IDS), "");
    }
}
