//! A differential run: one corpus of requests sent to two pack services
//! that serve the conformance fixture pack — ours and a reference — and
//! their answers compared part by part.
//!
//! Each service is indexed and started as the suite starts one (see
//! [`crate::harness`]). Every probe of the corpus (valid calls, invalid
//! ones, hostile bodies, every error code, every transport status) goes to
//! both; then both are stopped with SIGTERM. For each probe the run
//! compares the status, the headers the contract names, the body, and the
//! records of the probe's run; and, as the probes `boot` and `stop`, the
//! records each service writes about itself. What differs on every run
//! (times, durations, ports, fresh span ids, stack traces) is put in words
//! first.
//!
//! A difference is either listed in the accepted differences (a Markdown
//! table, [`parse_accepted`]) with its reason, or it fails the run; so does
//! an accepted difference that no longer occurs, so that the list stays
//! true.
//!
//! ```no_run
//! # async fn demo() {
//! use kindgi_conformance::Target;
//! use kindgi_conformance::differential::{Differential, parse_accepted};
//! let ours = Target::new(vec!["./conformance-pack".into(), "serve".into()], "./conformance-pack index --output {out}", "fixtures/conformance-pack");
//! let reference = Target::new(vec!["node".into(), "main.js".into()], "node index.js --output {out}", "fixtures/node-conformance-pack");
//! let accepted = parse_accepted(&std::fs::read_to_string("DIFFERENCES.md").unwrap()).unwrap();
//! let report = Differential::new(ours, reference).accept(accepted).run(|line| println!("{line}")).await;
//! assert!(report.ok(), "{}", report.summary());
//! # }
//! ```

mod accepted;
mod compare;
mod corpus;
mod observe;
mod scenarios;

use std::time::Duration;

pub use accepted::{Accepted, parse_accepted};
pub use compare::{Difference, Part, PartPattern};
use observe::Observation;
use scenarios::Scenario;

use crate::harness::{Pins, Service, StartOptions, Target};

/// How long a service may take to exit after SIGTERM before it is killed.
const STOP_GRACE: Duration = Duration::from_secs(10);

/// The pseudo-probe of the records a service writes while it boots.
const BOOT: &str = "boot";
/// The pseudo-probe of the records a service writes about itself while it
/// serves and stops.
const STOP: &str = "stop";

/// The ids of the probes, in report order: `boot`, the corpus's, `stop`,
/// then those of the scenarios that need a service of their own.
pub fn probe_ids() -> Vec<String> {
    let mut ids = vec![BOOT.to_owned()];
    ids.extend(corpus::corpus().iter().map(|p| p.id.to_owned()));
    ids.push(STOP.to_owned());
    ids.extend(Scenario::ALL.iter().flat_map(|s| s.probe_ids()));
    ids
}

/// A differential run of two targets.
#[derive(Debug, Clone)]
pub struct Differential {
    ours: Target,
    reference: Target,
    accepted: Vec<Accepted>,
}

/// What a differential run found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DiffReport {
    /// Probes on which the services agree.
    pub same: usize,
    /// Probes on which they differ only as accepted.
    pub accepted: usize,
    /// Probes with a difference that isn't accepted.
    pub differ: usize,
    /// Accepted differences that didn't occur.
    pub stale: usize,
    /// Why the run couldn't be made, if it couldn't.
    pub error: Option<String>,
}

impl DiffReport {
    /// Whether the run was made, every difference was accepted and every
    /// accepted difference occurred.
    pub fn ok(&self) -> bool {
        self.error.is_none() && self.differ == 0 && self.stale == 0
    }

    /// `N same, N accepted, N differ`, with `, N stale` when any entry was.
    pub fn summary(&self) -> String {
        let mut summary = format!(
            "{} same, {} accepted, {} differ",
            self.same, self.accepted, self.differ
        );
        if self.stale > 0 {
            summary.push_str(&format!(", {} stale", self.stale));
        }
        summary
    }
}

/// Both services' observations of one probe.
struct Pair {
    id: String,
    ours: Observation,
    reference: Observation,
}

impl Differential {
    /// A run of `ours` against `reference`, accepting no difference.
    pub fn new(ours: Target, reference: Target) -> Self {
        Self {
            ours,
            reference,
            accepted: Vec::new(),
        }
    }

    /// Accepts these differences.
    #[must_use]
    pub fn accept(mut self, accepted: Vec<Accepted>) -> Self {
        self.accepted = accepted;
        self
    }

    /// Runs the corpus against both and reports to `say`, for each probe,
    /// `same <id>`, or a `differ <id> <place>: <how>` line for each place
    /// that differs unaccepted and an `accepted <id> <part> (N places):
    /// <why>` line for each accepted difference that covers some; then a
    /// `stale` line for each accepted difference that didn't occur, then
    /// the summary.
    pub async fn run(self, mut say: impl FnMut(&str)) -> DiffReport {
        let pairs = match self.observe().await {
            Ok(pairs) => pairs,
            Err(error) => {
                say(&format!("error: {error}"));
                return DiffReport {
                    error: Some(error),
                    ..DiffReport::default()
                };
            }
        };
        let mut report = DiffReport::default();
        let mut used = vec![false; self.accepted.len()];
        for pair in &pairs {
            let differences = compare::compare(&pair.ours, &pair.reference);
            let id = pair.id.as_str();
            if differences.is_empty() {
                report.same += 1;
                say(&format!("same {id}"));
                continue;
            }
            let mut all_accepted = true;
            // Each entry that covers some of them, with how many places.
            let mut covered: Vec<(usize, usize)> = Vec::new();
            for difference in differences {
                match self
                    .accepted
                    .iter()
                    .position(|a| a.covers(id, &difference.part))
                {
                    Some(index) => {
                        used[index] = true;
                        match covered.iter_mut().find(|(entry, _)| *entry == index) {
                            Some((_, places)) => *places += 1,
                            None => covered.push((index, 1)),
                        }
                    }
                    None => {
                        all_accepted = false;
                        say(&format!(
                            "differ {id} {}: {}",
                            difference.part, difference.detail
                        ));
                    }
                }
            }
            for (index, places) in covered {
                let entry = &self.accepted[index];
                let places = if places > 1 {
                    format!(" ({places} places)")
                } else {
                    String::new()
                };
                say(&format!(
                    "accepted {id} {}{places}: {}",
                    entry.part, entry.why
                ));
            }
            if all_accepted {
                report.accepted += 1;
            } else {
                report.differ += 1;
            }
        }
        for (entry, used) in self.accepted.iter().zip(used) {
            if !used {
                report.stale += 1;
                say(&format!(
                    "stale {} {}: accepted, but the services agree",
                    entry.probe, entry.part
                ));
            }
        }
        say(&report.summary());
        report
    }

    /// Indexes and starts both, sends every probe to both, stops both, and
    /// pairs what each did.
    async fn observe(&self) -> Result<Vec<Pair>, String> {
        let work = tempfile::Builder::new()
            .prefix("kindgi-differential-")
            .tempdir()
            .map_err(|e| format!("cannot make a work folder: {e}"))?;
        let (ours_index, reference_index) = (
            work.path().join("ours-index.json"),
            work.path().join("reference-index.json"),
        );
        let (ours, reference) = tokio::try_join!(
            start(&self.ours, &ours_index, "ours"),
            start(&self.reference, &reference_index, "the reference"),
        )?;
        let probes = corpus::corpus();
        let mut seen = Vec::with_capacity(probes.len());
        for (n, probe) in probes.iter().enumerate() {
            let (a, b) = tokio::join!(
                observe::send_fenced(&ours, probe, n, work.path()),
                observe::send_fenced(&reference, probe, n, work.path()),
            );
            let a = a.map_err(|e| format!("{}: ours: {e}", probe.id))?;
            let b = b.map_err(|e| format!("{}: the reference: {e}", probe.id))?;
            seen.push((a, b));
        }
        let (records_ours, records_reference) = tokio::join!(
            observe::stopped(&ours, STOP_GRACE),
            observe::stopped(&reference, STOP_GRACE)
        );
        let mut pairs = vec![Pair {
            id: BOOT.to_owned(),
            ours: Observation::records_only(observe::boot_records(&records_ours)),
            reference: Observation::records_only(observe::boot_records(&records_reference)),
        }];
        let mut windows = (Vec::new(), Vec::new());
        for (probe, ((mut a, window_a), (mut b, window_b))) in probes.iter().zip(seen) {
            a.records = observe::records_of(&records_ours, probe, &window_a);
            b.records = observe::records_of(&records_reference, probe, &window_b);
            windows.0.push(window_a);
            windows.1.push(window_b);
            pairs.push(Pair {
                id: probe.id.to_owned(),
                ours: a,
                reference: b,
            });
        }
        pairs.push(Pair {
            id: STOP.to_owned(),
            ours: Observation::records_only(observe::process_records(&records_ours, &windows.0)),
            reference: Observation::records_only(observe::process_records(
                &records_reference,
                &windows.1,
            )),
        });
        for scenario in Scenario::ALL {
            let (a, b) = tokio::join!(
                scenario_run(scenario, &self.ours, &ours_index, work.path()),
                scenario_run(scenario, &self.reference, &reference_index, work.path()),
            );
            let a = a.map_err(|e| format!("ours: {e}"))?;
            let b = b.map_err(|e| format!("the reference: {e}"))?;
            for ((id, ours), reference) in scenario.probe_ids().into_iter().zip(a).zip(b) {
                pairs.push(Pair {
                    id,
                    ours,
                    reference,
                });
            }
        }
        Ok(pairs)
    }
}

/// Indexes `target` into `index` and starts it, with the env a runtime
/// gives and one variable the env filter must drop.
async fn start(target: &Target, index: &std::path::Path, name: &str) -> Result<Service, String> {
    target
        .index(index, &Pins::default())
        .await
        .map_err(|e| format!("{name}: {e}"))?;
    let options = StartOptions::new(index).env("CONFORMANCE_DROPPED_PROBE", "dropped");
    target
        .start(&options)
        .await
        .map_err(|e| format!("{name}: {e}"))
}

/// Starts `target` for `scenario` in a folder of its own and runs it.
async fn scenario_run(
    scenario: Scenario,
    target: &Target,
    index: &std::path::Path,
    work: &std::path::Path,
) -> Result<Vec<Observation>, String> {
    let folder = tempfile::Builder::new()
        .prefix(scenario.id())
        .tempdir_in(work)
        .map_err(|e| format!("cannot make a work folder: {e}"))?;
    let service = scenario.start(target, index, folder.path()).await?;
    scenario.run(&service, folder.path()).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_summary_says_stale_entries_only_when_there_are_some() {
        let mut report = DiffReport {
            same: 3,
            accepted: 1,
            ..DiffReport::default()
        };
        assert_eq!(report.summary(), "3 same, 1 accepted, 0 differ");
        assert!(report.ok());
        report.stale = 2;
        assert_eq!(report.summary(), "3 same, 1 accepted, 0 differ, 2 stale");
        assert!(!report.ok());
    }

    #[test]
    fn boot_and_stop_frame_the_probes() {
        let ids = probe_ids();
        assert_eq!(ids.first().map(String::as_str), Some(BOOT));
        assert!(ids.iter().any(|id| id == STOP));
        let unique: std::collections::HashSet<&String> = ids.iter().collect();
        assert_eq!(unique.len(), ids.len());
    }
}
