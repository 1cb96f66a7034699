//! Two observations of one probe, compared part by part: the status, each
//! named header, the body, the records.

use std::fmt;

use serde_json::Value;

use super::observe::{NAMED_HEADERS, Observation};
use crate::http::shorten;

/// A part of an observation, as the accepted differences name it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Part {
    /// The status (or that no answer came).
    Status,
    /// A header the contract names.
    Header(String),
    /// The body.
    Body,
    /// The records of the probe's run.
    Records,
}

impl fmt::Display for Part {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Status => f.write_str("status"),
            Self::Header(name) => write!(f, "header {name}"),
            Self::Body => f.write_str("body"),
            Self::Records => f.write_str("records"),
        }
    }
}

impl std::str::FromStr for Part {
    type Err = String;

    /// `status`, `body`, `records` or `header <name>` (a header the
    /// contract names).
    fn from_str(text: &str) -> Result<Self, String> {
        match text.trim() {
            "status" => Ok(Self::Status),
            "body" => Ok(Self::Body),
            "records" => Ok(Self::Records),
            other => match other.strip_prefix("header ") {
                Some(name) if NAMED_HEADERS.contains(&name.trim()) => {
                    Ok(Self::Header(name.trim().to_owned()))
                }
                _ => Err(format!(
                    "{other:?} is not a part: status, body, records or header <{}>",
                    NAMED_HEADERS.join("|")
                )),
            },
        }
    }
}

/// One part on which the services differ, and how.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Difference {
    /// The part.
    pub part: Part,
    /// How it differs, in a line: where, ours, the reference's.
    pub detail: String,
}

/// The parts on which `ours` and `reference` differ, in part order.
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
    if let Some(detail) = first_difference(&ours.body, &reference.body, "") {
        differences.push(Difference {
            part: Part::Body,
            detail,
        });
    }
    let records = (
        Value::Array(ours.records.clone()),
        Value::Array(reference.records.clone()),
    );
    if let Some(detail) = first_difference(&records.0, &records.1, "") {
        differences.push(Difference {
            part: Part::Records,
            detail,
        });
    }
    differences
}

fn status(status: Option<u16>) -> String {
    status.map_or_else(|| "no answer".to_owned(), |s| s.to_string())
}

fn header(value: Option<&String>) -> String {
    value.map_or_else(|| "absent".to_owned(), |v| format!("{v:?}"))
}

/// Where `a` and `b` first differ (a JSON pointer, `""` for the whole), and
/// both values there; `None` when they are equal. Object keys are compared
/// as sets, in sorted order; arrays item by item.
pub(crate) fn first_difference(a: &Value, b: &Value, at: &str) -> Option<String> {
    if a == b {
        return None;
    }
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let mut keys: Vec<&String> = x.keys().chain(y.keys()).collect();
            keys.sort();
            keys.dedup();
            keys.into_iter().find_map(|key| {
                let here = format!("{at}/{}", key.replace('~', "~0").replace('/', "~1"));
                match (x.get(key), y.get(key)) {
                    (Some(p), Some(q)) => first_difference(p, q, &here),
                    (p, q) => Some(said(&here, p, q)),
                }
            })
        }
        (Value::Array(x), Value::Array(y)) => {
            let found = x
                .iter()
                .zip(y)
                .enumerate()
                .find_map(|(i, (p, q))| first_difference(p, q, &format!("{at}/{i}")));
            found.or_else(|| {
                Some(format!(
                    "at {}: ours has {} items, the reference's {}",
                    place(at),
                    x.len(),
                    y.len()
                ))
            })
        }
        _ => Some(said(at, Some(a), Some(b))),
    }
}

fn place(at: &str) -> &str {
    if at.is_empty() { "the top" } else { at }
}

fn said(at: &str, ours: Option<&Value>, reference: Option<&Value>) -> String {
    let show =
        |v: Option<&Value>| v.map_or_else(|| "absent".to_owned(), |v| shorten(&v.to_string(), 160));
    format!(
        "at {}: ours {}, the reference's {}",
        place(at),
        show(ours),
        show(reference)
    )
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
    fn each_part_is_named_with_where_it_differs() {
        let ours = seen(200, json!({"v": 2, "issues": [{"message": "a"}]}));
        let mut theirs = seen(503, json!({"v": 2, "issues": [{"message": "b"}]}));
        theirs.headers.insert("retry-after", "1".to_owned());
        theirs.records.push(json!({"kind": "call"}));
        let found: Vec<String> = compare(&ours, &theirs)
            .iter()
            .map(|d| format!("{}: {}", d.part, d.detail))
            .collect();
        assert_eq!(
            found,
            [
                "status: ours 200, the reference's 503",
                "header retry-after: ours absent, the reference's \"1\"",
                "body: at /issues/0/message: ours \"a\", the reference's \"b\"",
                "records: at the top: ours has 0 items, the reference's 1",
            ]
        );
    }

    #[test]
    fn a_missing_key_is_named() {
        assert_eq!(
            first_difference(&json!({"a/b": 1}), &json!({}), ""),
            Some("at /a~1b: ours 1, the reference's absent".to_owned())
        );
    }

    #[test]
    fn parts_read_back_from_their_names() {
        for part in [
            Part::Status,
            Part::Body,
            Part::Records,
            Part::Header("retry-after".to_owned()),
        ] {
            assert_eq!(part.to_string().parse::<Part>(), Ok(part));
        }
        assert_eq!(
            "header x-nope".parse::<Part>(),
            Err("\"header x-nope\" is not a part: status, body, records or header <content-type|retry-after|kindgi-duration-ms|kindgi-artifact-version>".to_owned())
        );
    }
}
