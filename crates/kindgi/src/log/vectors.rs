//! The log's test vectors (`tests/vectors/log-records.json`): for each case,
//! whether the record is written, and the line exactly, keys in order.

use serde::Deserialize;
use serde::de::{MapAccess, Visitor};
use serde_json::Value;

use super::record::{Ids, Level, PACK, PACK_TOOL, Record};
use super::settings::LogSettings;
use super::writer::Logger;

/// A JSON object with its keys in the order written.
#[derive(Debug, PartialEq)]
struct Ordered(Vec<(String, Value)>);

impl<'de> Deserialize<'de> for Ordered {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Keys;
        impl<'de> Visitor<'de> for Keys {
            type Value = Ordered;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Ordered, A::Error> {
                let mut pairs = Vec::new();
                while let Some(pair) = map.next_entry::<String, Value>()? {
                    pairs.push(pair);
                }
                Ok(Ordered(pairs))
            }
        }
        deserializer.deserialize_map(Keys)
    }
}

#[derive(Deserialize)]
struct Vectors {
    now: String,
    cases: Vec<Case>,
}

#[derive(Deserialize)]
struct Case {
    name: String,
    logger: LoggerSettings,
    subsystem: String,
    level: String,
    message: String,
    fields: Ordered,
    expected: Option<Ordered>,
}

#[derive(Deserialize)]
struct LoggerSettings {
    level: String,
    #[serde(default)]
    levels: std::collections::BTreeMap<String, String>,
}

fn level(name: &str) -> Level {
    Level::parse(name).unwrap_or_else(|| panic!("a level: {name}"))
}

/// The record a case logs: its ids where ids go, its other fields in order.
fn record(case: &Case) -> Record {
    let subsystem = match case.subsystem.as_str() {
        "pack" => PACK,
        "pack.tool" => PACK_TOOL,
        other => panic!("a subsystem the service logs under: {other}"),
    };
    let mut ids = Ids::default();
    let mut record = Record::new(level(&case.level), case.message.clone()).subsystem(subsystem);
    for (key, value) in &case.fields.0 {
        let text = value.as_str().map(str::to_owned);
        let id = match key.as_str() {
            "traceId" => &mut ids.trace_id,
            "spanId" => &mut ids.span_id,
            "requestId" => &mut ids.request_id,
            "tenantId" => &mut ids.tenant_id,
            "projectId" => &mut ids.project_id,
            "orgId" => &mut ids.org_id,
            "runId" => &mut ids.run_id,
            "toolId" => &mut ids.tool_id,
            _ => {
                record = record.field_owned(key.clone(), value.clone());
                continue;
            }
        };
        *id = text;
    }
    record.ids(ids)
}

#[test]
fn every_vector_is_written_as_expected() {
    let text = include_str!("../../tests/vectors/log-records.json");
    let vectors: Vectors = serde_json::from_str(text).expect("the vectors");
    assert!(!vectors.cases.is_empty());
    for case in &vectors.cases {
        let mut settings = LogSettings::new(true, level(&case.logger.level));
        settings.levels = case
            .logger
            .levels
            .iter()
            .map(|(name, l)| (name.clone(), level(l)))
            .collect();
        let logger = Logger::new(settings);
        let record = record(case);
        let written = logger
            .enabled_in(record.subsystem, record.level)
            .then(|| record.redacted().json_line(&vectors.now));
        let got: Option<Ordered> = written.map(|line| {
            assert!(line.ends_with(b"\n"), "{}", case.name);
            serde_json::from_slice(&line).expect("a JSON line")
        });
        assert_eq!(got, case.expected, "{}", case.name);
    }
}
