//! String formats as ajv-formats (full mode) checks them.
//!
//! The `jsonschema` crate's own checks follow the RFCs more strictly than
//! ajv-formats in places (a space between date and time, a `urn:uuid:` prefix,
//! `user@localhost`), so the formats where the two differ are checked here,
//! with ajv-formats' rules. Formats ajv-formats does not know (`iri`,
//! `iri-reference`) are not checked, as Ajv ignores unknown formats.

use jsonschema::ValidationOptions;

/// Registers this module's format checks on `options`.
pub(crate) fn register(options: ValidationOptions<'_>) -> ValidationOptions<'_> {
    options
        .with_format("date", date)
        .with_format("time", |s: &str| time(s, true))
        .with_format("date-time", |s: &str| date_time(s, true))
        .with_format("iso-time", |s: &str| time(s, false))
        .with_format("iso-date-time", |s: &str| date_time(s, false))
        .with_format("email", email)
        .with_format("hostname", hostname)
        .with_format("ipv4", ipv4)
        .with_format("uuid", uuid)
        .with_format("byte", byte)
        .with_format("url", url)
        .with_format("json-pointer-uri-fragment", json_pointer_uri_fragment)
        .with_format("password", |_: &str| true)
        .with_format("binary", |_: &str| true)
        .with_format("iri", |_: &str| true)
        .with_format("iri-reference", |_: &str| true)
}

fn digits(s: &str) -> Option<u32> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// `YYYY-MM-DD` naming a real day (leap years included).
pub(crate) fn date(s: &str) -> bool {
    let b = s.as_bytes();
    if !s.is_ascii() || b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return false;
    }
    let (Some(year), Some(month), Some(day)) = (digits(&s[..4]), digits(&s[5..7]), digits(&s[8..]))
    else {
        return false;
    };
    let leap = year.is_multiple_of(4) && (!year.is_multiple_of(100) || year.is_multiple_of(400));
    let days = match month {
        2 if leap => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        1..=12 => 31,
        _ => return false,
    };
    (1..=days).contains(&day)
}

/// `HH:MM:SS[.frac][Z|±HH[[:]MM]]`; the zone is required when `zone_required`.
/// A leap second is accepted only at 23:59:60 UTC.
pub(crate) fn time(s: &str, zone_required: bool) -> bool {
    let b = s.as_bytes();
    if !s.is_ascii() || b.len() < 8 || b[2] != b':' || b[5] != b':' {
        return false;
    }
    let (Some(hour), Some(minute)) = (digits(&s[..2]), digits(&s[3..5])) else {
        return false;
    };
    let rest = &s[6..];
    let seconds_end = rest
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(rest.len());
    let (seconds, zone) = rest.split_at(seconds_end);
    let (whole, fraction) = match seconds.split_once('.') {
        Some((whole, fraction)) => (whole, Some(fraction)),
        None => (seconds, None),
    };
    let fraction_ok =
        fraction.is_none_or(|f| !f.is_empty() && f.bytes().all(|c| c.is_ascii_digit()));
    if whole.len() != 2 || digits(whole).is_none() || !fraction_ok {
        return false;
    }
    let Ok(second) = seconds.parse::<f64>() else {
        return false;
    };
    let (sign, zone_hour, zone_minute) = match zone.as_bytes() {
        [] if zone_required => return false,
        [] => (1, 0, 0),
        [b'z' | b'Z'] => (1, 0, 0),
        [sign @ (b'+' | b'-'), rest @ ..] => {
            let rest = std::str::from_utf8(rest).unwrap_or_default();
            let (h, m) = match rest.len() {
                2 => (rest, "0"),
                4 => (&rest[..2], &rest[2..]),
                5 if rest.as_bytes()[2] == b':' => (&rest[..2], &rest[3..]),
                _ => return false,
            };
            let (Some(h), Some(m)) = (digits(h), digits(m)) else {
                return false;
            };
            (if *sign == b'-' { -1 } else { 1 }, h, m)
        }
        _ => return false,
    };
    if zone_hour > 23 || zone_minute > 59 {
        return false;
    }
    if hour <= 23 && minute <= 59 && second < 60.0 {
        return true;
    }
    let (hour, minute) = (i64::from(hour), i64::from(minute));
    let utc_minute = minute - i64::from(zone_minute) * sign;
    let utc_hour = hour - i64::from(zone_hour) * sign - i64::from(utc_minute < 0);
    matches!(utc_hour, 23 | -1) && matches!(utc_minute, 59 | -1) && second < 61.0
}

/// A date and a time separated by exactly one `T`, `t` or whitespace character.
pub(crate) fn date_time(s: &str, zone_required: bool) -> bool {
    let mut parts = s.split(|c: char| c == 't' || c == 'T' || c.is_whitespace());
    match (parts.next(), parts.next(), parts.next()) {
        (Some(d), Some(t), None) => date(d) && time(t, zone_required),
        _ => false,
    }
}

fn is_atom_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || "!#$%&'*+/=?^_`{|}~-".contains(c)
}

fn is_label(label: &str, max: usize) -> bool {
    let b = label.as_bytes();
    !b.is_empty()
        && b.len() <= max
        && b[0].is_ascii_alphanumeric()
        && b[b.len() - 1].is_ascii_alphanumeric()
        && b.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'-')
}

/// `local@domain`: dot-separated atoms, then at least two dot-separated labels.
pub(crate) fn email(s: &str) -> bool {
    let Some((local, domain)) = s.rsplit_once('@') else {
        return false;
    };
    let local_ok = local
        .split('.')
        .all(|atom| !atom.is_empty() && atom.chars().all(is_atom_char));
    let labels: Vec<&str> = domain.split('.').collect();
    local_ok && labels.len() >= 2 && labels.iter().all(|l| is_label(l, usize::MAX))
}

/// Labels of 1–63 letters, digits and inner hyphens; 253 characters at most,
/// one trailing dot allowed.
pub(crate) fn hostname(s: &str) -> bool {
    let name = s.strip_suffix('.').unwrap_or(s);
    !name.is_empty() && name.len() <= 253 && name.split('.').all(|l| is_label(l, 63))
}

/// Four decimal octets, 0–255, without leading zeros.
pub(crate) fn ipv4(s: &str) -> bool {
    let parts: Vec<&str> = s.split('.').collect();
    parts.len() == 4
        && parts.iter().all(|p| {
            p.len() <= 3
                && (*p == "0" || !p.starts_with('0'))
                && digits(p).is_some_and(|n| n <= 255)
        })
}

/// `8-4-4-4-12` hex digits, optionally after `urn:uuid:`.
pub(crate) fn uuid(s: &str) -> bool {
    let body = match s.get(..9) {
        Some(prefix) if prefix.eq_ignore_ascii_case("urn:uuid:") => &s[9..],
        _ => s,
    };
    let groups: Vec<&str> = body.split('-').collect();
    groups.len() == 5
        && groups
            .iter()
            .zip([8, 4, 4, 4, 12])
            .all(|(g, len)| g.len() == len && g.bytes().all(|c| c.is_ascii_hexdigit()))
}

/// Padded base64.
pub(crate) fn byte(s: &str) -> bool {
    let body = s.trim_end_matches('=');
    let padding = s.len() - body.len();
    s.len().is_multiple_of(4)
        && padding <= 2
        && body
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || c == b'+' || c == b'/')
}

/// An `http`, `https` or `ftp` URL with a dotted host name or an IPv4 address.
pub(crate) fn url(s: &str) -> bool {
    let Some((scheme, rest)) = s.split_once("://") else {
        return false;
    };
    if !["http", "https", "ftp"]
        .iter()
        .any(|k| k.eq_ignore_ascii_case(scheme))
        || rest.chars().any(char::is_whitespace)
    {
        return false;
    }
    let authority = rest.split('/').next().unwrap_or_default();
    let host_port = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let (host, port) = match host_port.rsplit_once(':') {
        Some((h, p)) => (h, Some(p)),
        None => (host_port, None),
    };
    if port.is_some_and(|p| !(2..=5).contains(&p.len()) || digits(p).is_none()) {
        return false;
    }
    let label_ok = |l: &str| {
        !l.is_empty()
            && !l.starts_with('-')
            && !l.ends_with('-')
            && l.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || u32::from(c) >= 0xa1)
    };
    let labels: Vec<&str> = host.split('.').collect();
    let tld_ok = labels.last().is_some_and(|t| {
        t.chars().count() >= 2
            && t.chars()
                .all(|c| c.is_ascii_alphabetic() || u32::from(c) >= 0xa1)
    });
    ipv4(host) || (labels.len() >= 2 && labels.iter().all(|l| label_ok(l)) && tld_ok)
}

/// `#` followed by JSON Pointer tokens written as URI fragment characters.
pub(crate) fn json_pointer_uri_fragment(s: &str) -> bool {
    let Some(pointer) = s.strip_prefix('#') else {
        return false;
    };
    if pointer.is_empty() {
        return true;
    }
    let Some(tokens) = pointer.strip_prefix('/') else {
        return false;
    };
    let b = tokens.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let step = match c {
            b'%' if b.get(i + 1).is_some_and(u8::is_ascii_hexdigit)
                && b.get(i + 2).is_some_and(u8::is_ascii_hexdigit) =>
            {
                3
            }
            b'~' if matches!(b.get(i + 1), Some(b'0' | b'1')) => 2,
            b'/' => 1,
            c if c.is_ascii_alphanumeric() || b"_-.!$&'()*+,;:=@".contains(&c) => 1,
            _ => return false,
        };
        i += step;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates() {
        assert!(date("2024-02-29"));
        assert!(!date("2023-02-29"));
        assert!(!date("2024-13-01"));
        assert!(!date("2024-1-01"));
        assert!(!date("２０２４-01-01"));
    }

    #[test]
    fn times_and_date_times() {
        assert!(time("10:00:00Z", true));
        assert!(time("10:00:00.123+02:00", true));
        assert!(time("10:00:00+0200", true));
        assert!(!time("10:00:00", true));
        assert!(time("10:00:00", false));
        assert!(!time("24:00:00Z", true));
        assert!(time("23:59:60Z", true));
        assert!(!time("22:59:60Z", true));
        assert!(time("01:29:60+01:30", true));
        assert!(!time("10:00:00.Z", true));
        assert!(date_time("2024-01-01T10:00:00Z", true));
        assert!(date_time("2024-01-01 10:00:00z", true));
        assert!(date_time("2024-01-01t10:00:00+01:00", true));
        assert!(!date_time("2024-01-01T10:00:00", true));
        assert!(date_time("2024-01-01T10:00:00", false));
        assert!(!date_time("2024-01-01", true));
    }

    #[test]
    fn emails_and_hosts() {
        assert!(email("a.b+c@example.com"));
        assert!(!email("a@localhost"));
        assert!(!email("a..b@example.com"));
        assert!(!email("a@-x.com"));
        assert!(hostname("example.com."));
        assert!(hostname("localhost"));
        assert!(!hostname("-bad.com"));
        assert!(!hostname(&"a".repeat(64)));
    }

    #[test]
    fn addresses_ids_and_bytes() {
        assert!(ipv4("192.168.0.1"));
        assert!(!ipv4("192.168.0.01"));
        assert!(!ipv4("256.1.1.1"));
        assert!(uuid("123e4567-e89b-12d3-a456-426614174000"));
        assert!(uuid("urn:uuid:123E4567-E89B-12D3-A456-426614174000"));
        assert!(!uuid("123e4567e89b12d3a456426614174000"));
        assert!(byte("aGk="));
        assert!(byte(""));
        assert!(!byte("aGk"));
        assert!(!byte("a=Gk"));
    }

    #[test]
    fn urls_and_fragments() {
        assert!(url("https://example.com/path?q=1"));
        assert!(url("http://user:pw@example.co.uk:8080"));
        assert!(!url("https://localhost"));
        assert!(!url("mailto:a@example.com"));
        assert!(json_pointer_uri_fragment("#/a/b~1c/%20"));
        assert!(json_pointer_uri_fragment("#"));
        assert!(!json_pointer_uri_fragment("#/a b"));
    }
}
