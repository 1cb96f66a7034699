//! What the standard OpenTelemetry variables ask of the service, read once
//! at start: where to export (`OTEL_EXPORTER_OTLP_ENDPOINT`, or a signal's
//! own `…_TRACES_ENDPOINT` / `…_METRICS_ENDPOINT`), with which headers and
//! timeout, the service's name and resource, the sampler, and how spans
//! are batched and metrics read. `<pack> serve` takes the headers out of
//! the process environment as it reads them, as it does its token: they
//! are credentials the pack's code has no use for.
//!
//! No endpoint (or `OTEL_SDK_DISABLED=true`): nothing is exported, and a
//! call costs nothing more.

use std::time::Duration;

/// Where one signal goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Endpoint {
    /// The whole URL, its path included (`…/v1/traces`).
    pub(crate) url: String,
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) timeout: Duration,
}

/// Which spans are recorded (`OTEL_TRACES_SAMPLER`, `…_ARG`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Sampling {
    AlwaysOn,
    AlwaysOff,
    Ratio(f64),
    /// As the caller's span was sampled, else the inner rule.
    ParentBased(Root),
}

/// The rule of [`Sampling::ParentBased`] for a call without a caller's
/// span.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Root {
    AlwaysOn,
    AlwaysOff,
    Ratio(f64),
}

/// The settings, when something is to be exported.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct OtelSettings {
    pub(crate) traces: Option<Endpoint>,
    pub(crate) metrics: Option<Endpoint>,
    /// `OTEL_SERVICE_NAME`; else the resource's `service.name`; else the
    /// pack's id.
    pub(crate) service_name: Option<String>,
    /// `OTEL_RESOURCE_ATTRIBUTES`, in order.
    pub(crate) resource: Vec<(String, String)>,
    pub(crate) sampling: Sampling,
    /// `OTEL_BSP_SCHEDULE_DELAY`: how long a span may wait to be sent.
    pub(crate) span_delay: Duration,
    /// `OTEL_BSP_MAX_QUEUE_SIZE`: spans kept while the collector is slow;
    /// past it, spans are dropped (and counted), never the call slowed.
    pub(crate) span_queue: usize,
    /// `OTEL_BSP_MAX_EXPORT_BATCH_SIZE`.
    pub(crate) span_batch: usize,
    /// `OTEL_METRIC_EXPORT_INTERVAL`.
    pub(crate) metric_interval: Duration,
}

/// Whether `name` is one of the variables read.
pub(crate) fn is_otel_var(name: &str) -> bool {
    name.starts_with("OTEL_")
}

/// Whether `name` holds the collector's credentials (its headers): the
/// variables `<pack> serve` takes out of its environment. The other
/// `OTEL_*` variables stay, as the env filter keeps them.
pub(crate) fn is_credential_var(name: &str) -> bool {
    name.starts_with("OTEL_EXPORTER_OTLP_") && name.ends_with("HEADERS")
}

impl OtelSettings {
    /// The settings `vars` give (every `OTEL_*` variable, name and value):
    /// `None` when nothing is to be exported; every value that can't be
    /// honoured, named.
    pub(crate) fn from_vars(vars: &[(String, String)]) -> Result<Option<Self>, Vec<String>> {
        let get = |name: &str| {
            vars.iter()
                .rev()
                .find(|(n, _)| n == name)
                .map(|(_, v)| v.trim())
                .filter(|v| !v.is_empty())
        };
        if get("OTEL_SDK_DISABLED").is_some_and(|v| v.eq_ignore_ascii_case("true")) {
            return Ok(None);
        }
        let mut problems = Vec::new();
        let timeout = |name: &str, problems: &mut Vec<String>| {
            get(name).map(|raw| millis(name, raw, problems))
        };
        let general_timeout = timeout("OTEL_EXPORTER_OTLP_TIMEOUT", &mut problems)
            .flatten()
            .unwrap_or(Duration::from_secs(10));
        let general_headers = get("OTEL_EXPORTER_OTLP_HEADERS")
            .map(|raw| headers("OTEL_EXPORTER_OTLP_HEADERS", raw, &mut problems))
            .unwrap_or_default();
        let endpoint = |signal: &str, path: &str, problems: &mut Vec<String>| {
            let url = match get(&format!("OTEL_EXPORTER_OTLP_{signal}_ENDPOINT")) {
                Some(url) => url.to_owned(),
                None => format!(
                    "{}{path}",
                    get("OTEL_EXPORTER_OTLP_ENDPOINT")?.trim_end_matches('/')
                ),
            };
            if !(url.starts_with("http://") || url.starts_with("https://")) {
                problems.push(format!(
                    "The OTLP endpoint must be an http:// or https:// URL, got \"{url}\""
                ));
            }
            let own = format!("OTEL_EXPORTER_OTLP_{signal}_HEADERS");
            let mut all = general_headers.clone();
            if let Some(raw) = get(&own) {
                all.extend(headers(&own, raw, problems));
            }
            let timeout = timeout(&format!("OTEL_EXPORTER_OTLP_{signal}_TIMEOUT"), problems)
                .flatten()
                .unwrap_or(general_timeout);
            Some(Endpoint {
                url,
                headers: all,
                timeout,
            })
        };
        let traces = endpoint("TRACES", "/v1/traces", &mut problems);
        let metrics = endpoint("METRICS", "/v1/metrics", &mut problems);
        let resource = get("OTEL_RESOURCE_ATTRIBUTES")
            .map(|raw| headers("OTEL_RESOURCE_ATTRIBUTES", raw, &mut problems))
            .unwrap_or_default();
        let service_name = get("OTEL_SERVICE_NAME").map(str::to_owned).or_else(|| {
            resource
                .iter()
                .find(|(k, _)| k == "service.name")
                .map(|(_, v)| v.clone())
        });
        let sampling = sampling(get("OTEL_TRACES_SAMPLER"), get("OTEL_TRACES_SAMPLER_ARG"))
            .unwrap_or_else(|problem| {
                problems.push(problem);
                Sampling::ParentBased(Root::AlwaysOn)
            });
        let count = |name: &str, default: usize, problems: &mut Vec<String>| match get(name) {
            None => default,
            Some(raw) => match raw.parse::<usize>() {
                Ok(n) if n > 0 => n,
                _ => {
                    problems.push(format!("{name} must be a positive integer, got \"{raw}\""));
                    default
                }
            },
        };
        let span_delay = get("OTEL_BSP_SCHEDULE_DELAY")
            .and_then(|raw| millis("OTEL_BSP_SCHEDULE_DELAY", raw, &mut problems))
            .unwrap_or(Duration::from_secs(5));
        let span_queue = count("OTEL_BSP_MAX_QUEUE_SIZE", 2048, &mut problems);
        let span_batch =
            count("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", 512, &mut problems).min(span_queue);
        let metric_interval = get("OTEL_METRIC_EXPORT_INTERVAL")
            .and_then(|raw| millis("OTEL_METRIC_EXPORT_INTERVAL", raw, &mut problems))
            .unwrap_or(Duration::from_secs(60));
        if !problems.is_empty() {
            return Err(problems);
        }
        if traces.is_none() && metrics.is_none() {
            return Ok(None);
        }
        Ok(Some(Self {
            traces,
            metrics,
            service_name,
            resource,
            sampling,
            span_delay,
            span_queue,
            span_batch,
            metric_interval,
        }))
    }
}

/// A duration in milliseconds: a positive integer.
fn millis(name: &str, raw: &str, problems: &mut Vec<String>) -> Option<Duration> {
    match raw.parse::<u64>() {
        Ok(ms) if ms > 0 => Some(Duration::from_millis(ms)),
        _ => {
            problems.push(format!(
                "{name} must be a positive number of milliseconds, got \"{raw}\""
            ));
            None
        }
    }
}

/// A `key=value,key=value` list (W3C baggage's form, values
/// percent-decoded), as the OTLP headers and the resource's attributes
/// are written. A malformed entry is named without its value, which may
/// be a credential.
fn headers(name: &str, raw: &str, problems: &mut Vec<String>) -> Vec<(String, String)> {
    let mut pairs = Vec::new();
    for (at, entry) in raw.split(',').enumerate() {
        let entry = entry.trim();
        if entry.is_empty() {
            continue;
        }
        let decoded = entry.split_once('=').and_then(|(key, value)| {
            let key = key.trim();
            let value = percent_decode(value.trim())?;
            (!key.is_empty()).then(|| (key.to_owned(), value))
        });
        match decoded {
            Some(pair) => pairs.push(pair),
            None => problems.push(format!(
                "{name}: entry {} is not key=value (values percent-encoded)",
                at + 1
            )),
        }
    }
    pairs
}

/// `text` with its `%XX` escapes decoded; `None` for a broken escape or
/// bytes that are no UTF-8.
fn percent_decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while at < bytes.len() {
        if bytes[at] == b'%' {
            let hex = text.get(at + 1..at + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            at += 3;
        } else {
            out.push(bytes[at]);
            at += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// `OTEL_TRACES_SAMPLER` and its argument.
fn sampling(sampler: Option<&str>, arg: Option<&str>) -> Result<Sampling, String> {
    let ratio = || -> Result<f64, String> {
        match arg {
            None => Ok(1.0),
            Some(raw) => raw
                .parse::<f64>()
                .ok()
                .filter(|r| (0.0..=1.0).contains(r))
                .ok_or_else(|| {
                    format!("OTEL_TRACES_SAMPLER_ARG must be a ratio from 0 to 1, got \"{raw}\"")
                }),
        }
    };
    Ok(match sampler.map(str::to_ascii_lowercase).as_deref() {
        None | Some("parentbased_always_on") => Sampling::ParentBased(Root::AlwaysOn),
        Some("always_on") => Sampling::AlwaysOn,
        Some("always_off") => Sampling::AlwaysOff,
        Some("traceidratio") => Sampling::Ratio(ratio()?),
        Some("parentbased_always_off") => Sampling::ParentBased(Root::AlwaysOff),
        Some("parentbased_traceidratio") => Sampling::ParentBased(Root::Ratio(ratio()?)),
        Some(other) => {
            return Err(format!(
                "OTEL_TRACES_SAMPLER must be one of always_on, always_off, traceidratio, parentbased_always_on, parentbased_always_off, parentbased_traceidratio, got \"{other}\""
            ));
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(vars: &[(&str, &str)]) -> Result<Option<OtelSettings>, Vec<String>> {
        let vars: Vec<(String, String)> = vars
            .iter()
            .map(|(n, v)| ((*n).to_owned(), (*v).to_owned()))
            .collect();
        OtelSettings::from_vars(&vars)
    }

    #[test]
    fn nothing_to_export_without_an_endpoint() {
        assert_eq!(settings(&[]), Ok(None));
        assert_eq!(settings(&[("OTEL_SERVICE_NAME", "desk")]), Ok(None));
        assert_eq!(
            settings(&[
                ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318"),
                ("OTEL_SDK_DISABLED", "true")
            ]),
            Ok(None)
        );
    }

    #[test]
    fn the_standard_variables() {
        let set = settings(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318/"),
            (
                "OTEL_EXPORTER_OTLP_HEADERS",
                "x-api-key=abc%3D%3D, team=desk",
            ),
            (
                "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
                "https://m.example/otlp/metrics",
            ),
            ("OTEL_EXPORTER_OTLP_METRICS_TIMEOUT", "2500"),
            (
                "OTEL_RESOURCE_ATTRIBUTES",
                "deployment.environment=prod,service.name=from-resource",
            ),
            ("OTEL_TRACES_SAMPLER", "parentbased_traceidratio"),
            ("OTEL_TRACES_SAMPLER_ARG", "0.25"),
            ("OTEL_BSP_SCHEDULE_DELAY", "100"),
        ])
        .expect("valid")
        .expect("something to export");
        let traces = set.traces.expect("traces");
        assert_eq!(traces.url, "http://collector:4318/v1/traces");
        assert_eq!(
            traces.headers,
            [
                ("x-api-key".to_owned(), "abc==".to_owned()),
                ("team".to_owned(), "desk".to_owned())
            ]
        );
        assert_eq!(traces.timeout, Duration::from_secs(10));
        let metrics = set.metrics.expect("metrics");
        assert_eq!(metrics.url, "https://m.example/otlp/metrics");
        assert_eq!(metrics.timeout, Duration::from_millis(2500));
        assert_eq!(set.service_name.as_deref(), Some("from-resource"));
        assert_eq!(set.sampling, Sampling::ParentBased(Root::Ratio(0.25)));
        assert_eq!(set.span_delay, Duration::from_millis(100));
        assert_eq!((set.span_queue, set.span_batch), (2048, 512));
    }

    #[test]
    fn what_cannot_be_honoured_is_named_and_no_credential_shown() {
        let problems = settings(&[
            ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "collector:4318"),
            (
                "OTEL_EXPORTER_OTLP_HEADERS",
                "authorization=Bearer%20s3cret,broken",
            ),
            ("OTEL_TRACES_SAMPLER", "sometimes"),
            ("OTEL_BSP_MAX_QUEUE_SIZE", "0"),
        ])
        .expect_err("refused");
        assert_eq!(
            problems,
            [
                "OTEL_EXPORTER_OTLP_HEADERS: entry 2 is not key=value (values percent-encoded)",
                "The OTLP endpoint must be an http:// or https:// URL, got \"collector:4318\"",
                "OTEL_TRACES_SAMPLER must be one of always_on, always_off, traceidratio, parentbased_always_on, parentbased_always_off, parentbased_traceidratio, got \"sometimes\"",
                "OTEL_BSP_MAX_QUEUE_SIZE must be a positive integer, got \"0\"",
            ]
        );
        assert!(problems.iter().all(|p| !p.contains("s3cret")));
    }
}
