//! Running the cases: concurrently where they can be, reported in the
//! order they are listed, one line each, then a summary line.

use std::collections::BTreeMap;
use std::fmt;
use std::time::Duration;

use futures::StreamExt;

use crate::case::{Case, Feature};
use crate::harness::Target;
use crate::http::Transport;
use crate::session::Session;

/// How one case ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// It passed.
    Pass,
    /// It failed: the difference.
    Fail(String),
    /// It didn't run: why.
    Skip(String),
}

/// One case's line of the report.
#[derive(Debug, Clone)]
pub struct CaseReport {
    /// The case's id.
    pub id: &'static str,
    /// Its feature.
    pub feature: Feature,
    /// How it ended.
    pub outcome: Outcome,
}

impl fmt::Display for CaseReport {
    /// `pass <id>`, `fail <id>: <difference>` or `skip <id>: <why>`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.outcome {
            Outcome::Pass => write!(f, "pass {}", self.id),
            Outcome::Fail(why) => write!(f, "fail {}: {why}", self.id),
            Outcome::Skip(why) => write!(f, "skip {}: {why}", self.id),
        }
    }
}

/// Every case's outcome, in the order the cases are listed.
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// The HTTP the cases spoke.
    pub transport: Transport,
    /// One entry per case.
    pub cases: Vec<CaseReport>,
}

impl Report {
    fn count(&self, which: fn(&Outcome) -> bool) -> usize {
        self.cases.iter().filter(|c| which(&c.outcome)).count()
    }

    /// How many passed.
    pub fn passed(&self) -> usize {
        self.count(|o| matches!(o, Outcome::Pass))
    }

    /// The cases that failed.
    pub fn failures(&self) -> Vec<&CaseReport> {
        self.cases
            .iter()
            .filter(|c| matches!(c.outcome, Outcome::Fail(_)))
            .collect()
    }

    /// How many were skipped.
    pub fn skipped(&self) -> usize {
        self.count(|o| matches!(o, Outcome::Skip(_)))
    }

    /// Whether no case failed.
    pub fn ok(&self) -> bool {
        self.failures().is_empty()
    }

    /// `transport: <transport>`: the report's first line.
    ///
    /// ```
    /// use kindgi_conformance::{Report, Transport};
    /// let report = Report { transport: Transport::H2c, cases: Vec::new() };
    /// assert_eq!(
    ///     report.transport_line(),
    ///     "transport: h2c (HTTP/2 over cleartext with prior knowledge)"
    /// );
    /// ```
    pub fn transport_line(&self) -> String {
        transport_line(self.transport)
    }

    /// `N passed, N failed`, and `, N skipped` when any were.
    ///
    /// ```
    /// let report = kindgi_conformance::Report::default();
    /// assert_eq!(report.summary(), "0 passed, 0 failed");
    /// ```
    pub fn summary(&self) -> String {
        let mut line = format!("{} passed, {} failed", self.passed(), self.failures().len());
        if self.skipped() > 0 {
            line.push_str(&format!(", {} skipped", self.skipped()));
        }
        line
    }
}

/// The suite, set up for one target.
///
/// ```no_run
/// # async fn demo() {
/// use kindgi_conformance::{Feature, Suite, Target};
/// let target = Target::new(
///     vec!["./target/debug/conformance-pack".into(), "serve".into()],
///     "./target/debug/conformance-pack index --pack-dir fixtures/conformance-pack \
///      --output {out} --artifact-version {artifactVersion} --published-at {publishedAt}",
///     "fixtures/conformance-pack",
/// );
/// let report = Suite::new(target).skip(Feature::RustOnly).run(|line| println!("{line}")).await;
/// assert!(report.ok());
/// # }
/// ```
#[derive(Debug)]
pub struct Suite {
    target: Target,
    /// The features skipped, each with the reason given, if any.
    skip: Vec<(Feature, Option<String>)>,
    only: Option<String>,
    transport: Transport,
    concurrency: usize,
    case_timeout: Duration,
}

impl Suite {
    /// Every case, against `target`.
    pub fn new(target: Target) -> Self {
        Self {
            target,
            skip: Vec::new(),
            only: None,
            transport: Transport::Http1,
            concurrency: 6,
            case_timeout: Duration::from_secs(45),
        }
    }

    /// Skips every case of `feature`.
    #[must_use]
    pub fn skip(mut self, feature: Feature) -> Self {
        self.skip.push((feature, None));
        self
    }

    /// Skips every case of `feature`, saying why on each skipped case's
    /// line: `skip <id>: feature <feature> skipped: <reason>`.
    ///
    /// ```
    /// use kindgi_conformance::{Feature, Suite, Target};
    /// let target = Target::new(vec!["serve".into()], "index {out}", "pack");
    /// let suite = Suite::new(target)
    ///     .skip_because(Feature::Tenant, "it predates protocol 2.7");
    /// # drop(suite);
    /// ```
    #[must_use]
    pub fn skip_because(mut self, feature: Feature, reason: impl Into<String>) -> Self {
        self.skip.push((feature, Some(reason.into())));
        self
    }

    /// Runs only the cases whose id starts with `prefix`.
    #[must_use]
    pub fn only(mut self, prefix: impl Into<String>) -> Self {
        self.only = Some(prefix.into());
        self
    }

    /// Speaks `transport` to every service (HTTP/1.1 unless set). Over h2c,
    /// a case only HTTP/1.1 framing can express is skipped, its line saying
    /// why: `skip <id>: HTTP/1.1 only, not run over h2c: <why>`.
    ///
    /// ```
    /// use kindgi_conformance::{Suite, Target, Transport};
    /// let target = Target::new(vec!["serve".into()], "index {out}", "pack");
    /// let suite = Suite::new(target).transport(Transport::H2c);
    /// # drop(suite);
    /// ```
    #[must_use]
    pub fn transport(mut self, transport: Transport) -> Self {
        self.transport = transport;
        self
    }

    /// How many cases run at once (6 unless set).
    #[must_use]
    pub fn concurrency(mut self, n: usize) -> Self {
        self.concurrency = n.max(1);
        self
    }

    /// How long one case may take before it fails (45 s unless set).
    #[must_use]
    pub fn case_timeout(mut self, timeout: Duration) -> Self {
        self.case_timeout = timeout;
        self
    }

    /// Runs the cases; calls `on_line` with the transport line
    /// ([`Report::transport_line`]), then with each case's line, in list
    /// order, as soon as it and every case before it have ended, then with
    /// the summary line.
    pub async fn run(self, mut on_line: impl FnMut(&str)) -> Report {
        let cases = crate::cases::all();
        on_line(&transport_line(self.transport));
        let session = match Session::new(self.target.clone(), self.transport) {
            Ok(session) => session,
            Err(why) => {
                let report = Report {
                    transport: self.transport,
                    cases: cases
                        .iter()
                        .map(|c| CaseReport {
                            id: c.id(),
                            feature: c.feature(),
                            outcome: Outcome::Fail(why.clone()),
                        })
                        .collect(),
                };
                for case in &report.cases {
                    on_line(&case.to_string());
                }
                on_line(&report.summary());
                return report;
            }
        };
        let mut outcomes: Vec<Option<Outcome>> = vec![None; cases.len()];
        let mut printed = 0;
        let mut emit = |outcomes: &mut Vec<Option<Outcome>>,
                        i: usize,
                        outcome: Outcome,
                        on_line: &mut dyn FnMut(&str)| {
            outcomes[i] = Some(outcome);
            while let Some(Some(outcome)) = outcomes.get(printed) {
                let report = CaseReport {
                    id: cases[printed].id(),
                    feature: cases[printed].feature(),
                    outcome: outcome.clone(),
                };
                on_line(&report.to_string());
                printed += 1;
            }
        };
        let mut runnable = BTreeMap::new();
        for (i, case) in cases.iter().enumerate() {
            if let Some(why) = self.skip_reason(case) {
                emit(&mut outcomes, i, Outcome::Skip(why), &mut on_line);
            } else {
                runnable.insert(i, case);
            }
        }
        for last in [false, true] {
            let batch = runnable
                .iter()
                .filter(|(_, case)| case.runs_last() == last)
                .map(|(i, case)| {
                    let session = session.clone();
                    let timeout = self.case_timeout;
                    let i = *i;
                    let check = case.run(session);
                    async move {
                        let outcome = match tokio::time::timeout(timeout, tokio::spawn(check)).await
                        {
                            Ok(Ok(Ok(()))) => Outcome::Pass,
                            Ok(Ok(Err(difference))) => Outcome::Fail(difference),
                            Ok(Err(join)) => Outcome::Fail(format!("the case panicked: {join}")),
                            Err(_) => {
                                Outcome::Fail(format!("no verdict within {} s", timeout.as_secs()))
                            }
                        };
                        (i, outcome)
                    }
                });
            let mut finished = futures::stream::iter(batch).buffer_unordered(self.concurrency);
            while let Some((i, outcome)) = finished.next().await {
                emit(&mut outcomes, i, outcome, &mut on_line);
            }
        }
        session.shutdown().await;
        let report = Report {
            transport: self.transport,
            cases: cases
                .iter()
                .zip(outcomes)
                .map(|(case, outcome)| CaseReport {
                    id: case.id(),
                    feature: case.feature(),
                    outcome: outcome.unwrap_or_else(|| Outcome::Fail("never ran".to_owned())),
                })
                .collect(),
        };
        on_line(&report.summary());
        report
    }

    fn skip_reason(&self, case: &Case) -> Option<String> {
        if let Some((feature, reason)) = self.skip.iter().find(|(f, _)| *f == case.feature()) {
            return Some(match reason {
                Some(reason) => format!("feature {feature} skipped: {reason}"),
                None => format!("feature {feature} skipped"),
            });
        }
        if let Some(prefix) = &self.only
            && !case.id().starts_with(prefix.as_str())
        {
            return Some(format!("not under {prefix}"));
        }
        match (self.transport, case.http1_only_because()) {
            (Transport::Http1, _) | (_, None) => None,
            (transport, Some(why)) => Some(format!(
                "HTTP/1.1 only, not run over {}: {why}",
                transport.name()
            )),
        }
    }
}

/// `transport: <transport>`.
fn transport_line(transport: Transport) -> String {
    format!("transport: {transport}")
}

/// Every case: its id, feature and what it checks, in list order.
pub fn cases() -> Vec<Case> {
    crate::cases::all()
}

#[cfg(test)]
mod tests {
    use super::{Feature, Suite, Transport, cases};
    use crate::harness::Target;

    fn suite() -> Suite {
        Suite::new(Target::new(vec!["serve".into()], "index {out}", "pack"))
    }

    #[test]
    fn a_skip_gives_its_reason() {
        let tenant = cases()
            .into_iter()
            .find(|c| c.feature() == Feature::Tenant)
            .expect("a tenant case");
        assert_eq!(
            suite()
                .skip(Feature::Tenant)
                .skip_reason(&tenant)
                .as_deref(),
            Some("feature 2.7-tenant skipped")
        );
        assert_eq!(
            suite()
                .skip_because(Feature::Tenant, "it predates protocol 2.7")
                .skip_reason(&tenant)
                .as_deref(),
            Some("feature 2.7-tenant skipped: it predates protocol 2.7")
        );
        assert_eq!(suite().skip(Feature::Pause).skip_reason(&tenant), None);
    }

    #[test]
    fn over_h2c_only_the_http1_cases_are_skipped_each_saying_why() {
        let h2c = suite().transport(Transport::H2c);
        let skipped: Vec<(&str, Option<String>)> = cases()
            .iter()
            .filter_map(|c| h2c.skip_reason(c).map(|why| (c.id(), Some(why))))
            .collect();
        assert_eq!(
            skipped,
            [(
                "http.413.chunked",
                Some(
                    "HTTP/1.1 only, not run over h2c: HTTP/2 has no chunked transfer-encoding"
                        .to_owned()
                )
            )]
        );
        assert!(cases().iter().all(|c| suite().skip_reason(c).is_none()));
        let chunked = cases()
            .into_iter()
            .find(|c| c.id() == "http.413.chunked")
            .expect("the case");
        assert_eq!(
            h2c.only("invoke.").skip_reason(&chunked).as_deref(),
            Some("not under invoke."),
            "a case outside --only says so first"
        );
    }
}
