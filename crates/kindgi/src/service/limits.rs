//! The open-files limit, and the connection cap that fits in it.

use super::connections::MAX_CONNECTIONS;

/// The fewest descriptors kept back from connections, for the rest of the
/// process: the listener, the log's pipe, pack code's files and outgoing
/// connections.
const KEPT_BACK: u64 = 64;

/// The soft open-files limit, as it is: what [`crate::serve`] fits its
/// connections in when it runs in a process it doesn't own.
#[cfg(unix)]
pub(crate) fn open_files() -> Option<u64> {
    rlimit::getrlimit(rlimit::Resource::NOFILE)
        .ok()
        .map(|(soft, _)| soft)
}

/// Raises the soft open-files limit to the hard one (at most 2^20, Linux's
/// usual ceiling), as a server that holds thousands of connections needs;
/// the soft limit in force after, or `None` where it can't be read. A
/// change to the whole process: `<pack> serve` makes it, at boot.
#[cfg(unix)]
pub(crate) fn raise_open_files() -> Option<u64> {
    use rlimit::Resource;
    let (soft, hard) = rlimit::getrlimit(Resource::NOFILE).ok()?;
    let want = hard.min(1 << 20);
    if soft < want && rlimit::setrlimit(Resource::NOFILE, want, hard).is_ok() {
        return Some(want);
    }
    Some(soft)
}

/// Elsewhere the limit is not known.
#[cfg(not(unix))]
pub(crate) fn open_files() -> Option<u64> {
    None
}

/// Elsewhere the limit is left as it is, and not known.
#[cfg(not(unix))]
pub(crate) fn raise_open_files() -> Option<u64> {
    None
}

/// How many connections the service serves at once with `open_files`
/// descriptors: [`MAX_CONNECTIONS`], or fewer, so that a quarter of them
/// (at least [`KEPT_BACK`]) stays for the rest of the process — and the
/// service makes room for a newcomer by closing a silent connection before
/// it runs out of descriptors, rather than failing to accept.
pub(crate) fn connection_cap(open_files: Option<u64>) -> usize {
    let Some(open_files) = open_files else {
        return MAX_CONNECTIONS;
    };
    let kept = (open_files / 4).max(KEPT_BACK);
    let fit = usize::try_from(open_files.saturating_sub(kept)).unwrap_or(MAX_CONNECTIONS);
    fit.clamp(1, MAX_CONNECTIONS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cap_leaves_a_quarter_of_the_descriptors() {
        assert_eq!(connection_cap(None), MAX_CONNECTIONS);
        assert_eq!(connection_cap(Some(1024)), 768);
        assert_eq!(connection_cap(Some(4096)), 3072);
        assert_eq!(connection_cap(Some(65_536)), MAX_CONNECTIONS);
        assert_eq!(connection_cap(Some(100)), 36);
        assert_eq!(connection_cap(Some(10)), 1);
    }

    #[test]
    fn the_soft_limit_is_raised_to_the_hard_one() {
        let soft = raise_open_files().expect("Unix");
        let limits = std::fs::read_to_string("/proc/self/limits").expect("Linux");
        let hard: u64 = limits
            .lines()
            .find(|l| l.starts_with("Max open files"))
            .and_then(|l| l.split_whitespace().nth(4))
            .and_then(|n| n.parse().ok())
            .expect("the hard limit");
        assert_eq!(soft, hard.min(1 << 20));
    }
}
