//! Two observations of one probe, compared part by part: the status, each
//! named header, the body, the records.

use std::fmt;

use serde_json::Value;

use super::observe::{NAMED_HEADERS, Observation};
use crate::http::shorten;

/// A part of an observation: the status, a named header, or a place in the
/// body or the records (a JSON pointer, `""` for the whole).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Part {
    /// The status (or that no answer came).
    Status,
    /// A header the contract names.
    Header(String),
    /// A place in the body.
    Body(String),
    /// A place in the records of the probe (`/0/…` is the first record).
    Records(String),
}

impl fmt::Display for Part {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Status => f.write_str("status"),
            Self::Header(name) => write!(f, "header {name}"),
            Self::Body(at) if at.is_empty() => f.write_str("body"),
            Self::Body(at) => write!(f, "body {at}"),
            Self::Records(at) if at.is_empty() => f.write_str("records"),
            Self::Records(at) => write!(f, "records {at}"),
        }
    }
}

/// Which parts an accepted difference covers: `status`, `header <name>`,
/// `body` or `records` (anywhere in them), or `body <pointer>` / `records
/// <pointer>`: that place and anything under it, a `*` segment standing
/// for any one segment (`records /*/inMessage`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartPattern(Part);

impl PartPattern {
    /// Whether `part` is covered.
    pub fn covers(&self, part: &Part) -> bool {
        match (&self.0, part) {
            (Part::Status, Part::Status) => true,
            (Part::Header(a), Part::Header(b)) => a == b,
            (Part::Body(pattern), Part::Body(at)) | (Part::Records(pattern), Part::Records(at)) => {
                under(pattern, at)
            }
            _ => false,
        }
    }
}

/// Whether pointer `at` is `pattern` or under it, `*` matching any one
/// segment.
fn under(pattern: &str, at: &str) -> bool {
    let mut place = at.split('/').skip(1);
    pattern
        .split('/')
        .skip(1)
        .all(|want| place.next().is_some_and(|got| want == "*" || want == got))
}

impl fmt::Display for PartPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl std::str::FromStr for PartPattern {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        let text = text.trim();
        let (kind, rest) = text.split_once(' ').unwrap_or((text, ""));
        let rest = rest.trim();
        let pointer = || {
            if rest.is_empty() || rest.starts_with('/') {
                Ok(rest.to_owned())
            } else {
                Err(format!(
                    "{text:?}: a place is a JSON pointer, starting with /"
                ))
            }
        };
        let part = match kind {
            "status" if rest.is_empty() => Part::Status,
            "body" => Part::Body(pointer()?),
            "records" => Part::Records(pointer()?),
            "header" if NAMED_HEADERS.contains(&rest) => Part::Header(rest.to_owned()),
            _ => {
                return Err(format!(
                    "{text:?} is not a part: status, body [pointer], records [pointer] or header <{}>",
                    NAMED_HEADERS.join("|")
                ));
            }
        };
        Ok(Self(part))
    }
}

/// One place on which the services differ, and how.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Difference {
    /// Where.
    pub part: Part,
    /// How: ours, the reference's.
    pub detail: String,
}

/// Every place where `ours` and `reference` differ, in part order.
pub(crate) fn compare(ours: &Observation, reference: &Observation) -> Vec<Difference> {
    let mut differences = Vec::new();
    if ours.status != reference.status {
        differences.push(Difference {
            part: Part::Status,
            detail: format!(
                "ours {}, the reference's {}",
                status(ours.status),
                status(reference.status)
            ),
        });
    }
    for name in NAMED_HEADERS {
        let (a, b) = (ours.headers.get(name), reference.headers.get(name));
        if a != b {
            differences.push(Difference {
                part: Part::Header(name.to_owned()),
                detail: format!("ours {}, the reference's {}", header(a), header(b)),
            });
        }
    }
    let mut places = Vec::new();
    differences_in(Some(&ours.body), Some(&reference.body), "", &mut places);
    differences.extend(places.drain(..).map(|(at, detail)| Difference {
        part: Part::Body(at),
        detail,
    }));
    let records = (
        Value::Array(ours.records.clone()),
        Value::Array(reference.records.clone()),
    );
    differences_in(Some(&records.0), Some(&records.1), "", &mut places);
    differences.extend(places.into_iter().map(|(at, detail)| Difference {
        part: Part::Records(at),
        detail,
    }));
    differences
}

fn status(status: Option<u16>) -> String {
    status.map_or_else(|| "no answer".to_owned(), |s| s.to_string())
}

fn header(value: Option<&String>) -> String {
    value.map_or_else(|| "absent".to_owned(), |v| format!("{v:?}"))
}

/// Every place (a JSON pointer) where `a` and `b` differ, with both values
/// there, into `out`: a key or item only one has, or two values that
/// aren't both objects or both arrays and differ. Keys in sorted order.
pub(crate) fn differences_in(
    a: Option<&Value>,
    b: Option<&Value>,
    at: &str,
    out: &mut Vec<(String, String)>,
) {
    if a == b {
        return;
    }
    match (a, b) {
        (Some(Value::Object(x)), Some(Value::Object(y))) => {
            let mut keys: Vec<&String> = x.keys().chain(y.keys()).collect();
            keys.sort();
            keys.dedup();
            for key in keys {
                let here = format!("{at}/{}", key.replace('~', "~0").replace('/', "~1"));
                differences_in(x.get(key), y.get(key), &here, out);
            }
        }
        (Some(Value::Array(x)), Some(Value::Array(y))) => {
            for i in 0..x.len().max(y.len()) {
                differences_in(x.get(i), y.get(i), &format!("{at}/{i}"), out);
            }
        }
        _ => {
            let show = |v: Option<&Value>| {
                v.map_or_else(|| "absent".to_owned(), |v| shorten(&v.to_string(), 160))
            };
            out.push((
                at.to_owned(),
                format!("ours {}, the reference's {}", show(a), show(b)),
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde_json::json;

    use super::*;

    fn seen(status: u16, body: Value) -> Observation {
        Observation {
            status: Some(status),
            headers: BTreeMap::from([("content-type", "application/json".to_owned())]),
            body,
            records: Vec::new(),
        }
    }

    #[test]
    fn equal_observations_have_no_difference() {
        let a = seen(200, json!({"v": 2, "kind": "result"}));
        assert!(compare(&a, &a.clone()).is_empty());
    }

    #[test]
    fn every_place_that_differs_is_named() {
        let ours = seen(200, json!({"v": 2, "issues": [{"message": "a"}], "a/b": 1}));
        let mut theirs = seen(503, json!({"v": 2, "issues": [{"message": "b"}, {}]}));
        theirs.headers.insert("retry-after", "1".to_owned());
        theirs
            .records
            .push(json!({"kind": "call", "inMessage": ["id"]}));
        let found: Vec<String> = compare(&ours, &theirs)
            .iter()
            .map(|d| format!("{}: {}", d.part, d.detail))
            .collect();
        assert_eq!(
            found,
            [
                "status: ours 200, the reference's 503",
                "header retry-after: ours absent, the reference's \"1\"",
                "body /a~1b: ours 1, the reference's absent",
                "body /issues/0/message: ours \"a\", the reference's \"b\"",
                "body /issues/1: ours absent, the reference's {}",
                "records /0: ours absent, the reference's {\"inMessage\":[\"id\"],\"kind\":\"call\"}",
            ]
        );
    }

    #[test]
    fn patterns_cover_their_place_and_what_is_under_it() {
        let pattern = |text: &str| text.parse::<PartPattern>().expect(text);
        let records = pattern("records /*/inMessage");
        assert!(records.covers(&Part::Records("/0/inMessage".into())));
        assert!(records.covers(&Part::Records("/3/inMessage/1".into())));
        assert!(!records.covers(&Part::Records("/0/checkId".into())));
        assert!(!records.covers(&Part::Body("/0/inMessage".into())));
        assert!(pattern("body").covers(&Part::Body("/x".into())));
        assert!(pattern("body /indexHash").covers(&Part::Body("/indexHash".into())));
        assert!(!pattern("body /indexHash").covers(&Part::Body("".into())));
        assert!(pattern("status").covers(&Part::Status));
        assert!(pattern("header retry-after").covers(&Part::Header("retry-after".into())));
        assert_eq!(
            pattern("records /*/inMessage").to_string(),
            "records /*/inMessage"
        );
        assert_eq!(
            "header x-nope".parse::<PartPattern>(),
            Err("\"header x-nope\" is not a part: status, body [pointer], records [pointer] or header <content-type|retry-after|kindgi-duration-ms|kindgi-artifact-version>".to_owned())
        );
        assert_eq!(
            "body indexHash".parse::<PartPattern>(),
            Err("\"body indexHash\": a place is a JSON pointer, starting with /".to_owned())
        );
    }
}
