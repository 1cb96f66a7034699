//! The results as Markdown: one table of absolute numbers and ratios, the
//! goals with their verdicts, and where the CPU went.

use std::fmt::Write as _;
use std::time::Duration;

use crate::load::Outcome;
use crate::scenario::{BULK, BULK_INVALID};

/// One scenario's measurements on one target, over one or more rounds.
#[derive(Debug, Clone)]
pub(crate) struct ScenarioResult {
    /// The scenario's name.
    pub(crate) name: &'static str,
    /// Its request body's size in bytes.
    pub(crate) body_bytes: usize,
    /// Whether throughput is also reported in MB/s.
    pub(crate) bulk: bool,
    /// Every round's load, pooled: counts summed, latencies merged.
    pub(crate) outcome: Outcome,
    /// Each round's calls per second.
    pub(crate) rounds: Vec<f64>,
    /// The target's `VmRSS` just before the load, in KiB (the lowest of
    /// the rounds).
    pub(crate) rss_before_kib: u64,
    /// The target's highest `VmRSS` during the loads, in KiB.
    pub(crate) rss_peak_kib: u64,
    /// The target's CPU time over the loads (user + system, every thread).
    pub(crate) server_cpu: Option<Duration>,
    /// The load generator's CPU time over the loads.
    pub(crate) loadgen_cpu: Option<Duration>,
    /// The loads' wall time, warm-ups included.
    pub(crate) wall: Duration,
}

impl ScenarioResult {
    /// Calls per second: the median of the rounds, so that a burst of
    /// other work on the machine during one round moves it little.
    pub(crate) fn throughput(&self) -> f64 {
        if self.rounds.is_empty() {
            self.outcome.throughput()
        } else {
            median(&self.rounds)
        }
    }

    /// Request body megabytes (10^6 bytes) per second.
    pub(crate) fn mb_per_s(&self) -> f64 {
        self.throughput() * self.body_bytes as f64 / 1e6
    }

    /// The target's CPU time per call sent (warm-ups included).
    pub(crate) fn server_cpu_per_call(&self) -> Option<Duration> {
        let calls = u32::try_from(self.outcome.sent).ok().filter(|&n| n > 0)?;
        self.server_cpu.map(|cpu| cpu / calls)
    }

    /// The target's CPU µs per call.
    pub(crate) fn server_cpu_us(&self) -> f64 {
        self.server_cpu_per_call()
            .map_or(f64::NAN, |d| d.as_secs_f64() * 1e6)
    }

    /// How much the target's memory grew under the load: peak over before,
    /// in KiB.
    pub(crate) fn rss_growth_kib(&self) -> u64 {
        self.rss_peak_kib.saturating_sub(self.rss_before_kib)
    }

    /// Cores the target kept busy (1.0 = one).
    pub(crate) fn server_cores(&self) -> Option<f64> {
        self.server_cpu
            .map(|cpu| cpu.as_secs_f64() / self.wall.as_secs_f64())
    }

    /// Cores the load generator kept busy.
    pub(crate) fn loadgen_cores(&self) -> Option<f64> {
        self.loadgen_cpu
            .map(|cpu| cpu.as_secs_f64() / self.wall.as_secs_f64())
    }

    /// Adds another round of the same scenario on the same target.
    pub(crate) fn absorb(&mut self, other: ScenarioResult) {
        let sum = |a: Option<Duration>, b: Option<Duration>| a.zip(b).map(|(a, b)| a + b);
        self.outcome.ok += other.outcome.ok;
        self.outcome.errors += other.outcome.errors;
        self.outcome.sent += other.outcome.sent;
        self.outcome.elapsed += other.outcome.elapsed;
        self.outcome.latencies_us.extend(other.outcome.latencies_us);
        self.outcome.latencies_us.sort_unstable();
        self.rounds.extend(other.rounds);
        self.rss_before_kib = self.rss_before_kib.min(other.rss_before_kib);
        self.rss_peak_kib = self.rss_peak_kib.max(other.rss_peak_kib);
        self.server_cpu = sum(self.server_cpu, other.server_cpu);
        self.loadgen_cpu = sum(self.loadgen_cpu, other.loadgen_cpu);
        self.wall += other.wall;
    }
}

/// Everything measured on one target.
#[derive(Debug, Clone)]
pub(crate) struct TargetResult {
    /// Its column header.
    pub(crate) name: String,
    /// What it is to the report.
    pub(crate) role: Role,
    /// Spawn → `listening` record, every start, in milliseconds.
    pub(crate) starts_ms: Vec<f64>,
    /// `VmRSS` after boot and one echo call, in KiB.
    pub(crate) rss_idle_kib: u64,
    /// Each scenario, in order.
    pub(crate) scenarios: Vec<ScenarioResult>,
}

/// What a target is to the report: every row compares ours with each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    /// Our pack service as shipped: the first target.
    Ours,
    /// Our pack service built another way (an A/B of a speed piece).
    Variant,
    /// A reference pack service the goals compare ours with (Python).
    Reference,
    /// A server that does less than a pack service must: the last one,
    /// bare hyper, is the ceiling the CPU rows are measured over.
    Ceiling,
}

impl TargetResult {
    /// The median start → listening time.
    pub(crate) fn start_median_ms(&self) -> f64 {
        median(&self.starts_ms)
    }

    fn scenario(&self, name: &str) -> Option<&ScenarioResult> {
        self.scenarios.iter().find(|s| s.name == name)
    }
}

/// The median of some values (`NaN` when there are none).
pub(crate) fn median(values: &[f64]) -> f64 {
    if values.is_empty() {
        return f64::NAN;
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let mid = sorted.len() / 2;
    if sorted.len().is_multiple_of(2) {
        (sorted[mid - 1] + sorted[mid]) / 2.0
    } else {
        sorted[mid]
    }
}

/// Megabytes (10^6 bytes) of KiB.
fn mb(kib: u64) -> f64 {
    kib as f64 * 1024.0 / 1e6
}

/// A number with a sensible number of digits.
fn num(value: f64) -> String {
    if value.is_nan() {
        "–".to_owned()
    } else if value.abs() >= 1000.0 {
        group(value.round() as i64)
    } else if value.abs() >= 100.0 {
        format!("{value:.0}")
    } else if value.abs() >= 10.0 {
        format!("{value:.1}")
    } else {
        format!("{value:.2}")
    }
}

/// An integer with thin thousands separators.
fn group(value: i64) -> String {
    let digits = value.unsigned_abs().to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    if value < 0 { format!("-{out}") } else { out }
}

/// `a ÷ b` as a multiplier.
fn ratio(a: f64, b: f64) -> String {
    if a.is_nan() || b.is_nan() || b == 0.0 {
        return "–".to_owned();
    }
    let r = a / b;
    if r >= 10.0 {
        format!("{r:.0}×")
    } else if r >= 0.1 {
        format!("{r:.2}×")
    } else {
        format!("{r:.3}×")
    }
}

/// One metric across the targets.
struct Row {
    metric: String,
    values: Vec<f64>,
    /// How to print a value.
    show: fn(f64) -> String,
}

fn count(value: f64) -> String {
    if value.is_nan() {
        "–".into()
    } else {
        format!("{value:.0}")
    }
}

fn rows(targets: &[TargetResult]) -> Vec<Row> {
    let each = |f: &dyn Fn(&TargetResult) -> f64| -> Vec<f64> { targets.iter().map(f).collect() };
    let mut rows = Vec::new();
    for scenario in &targets[0].scenarios {
        let name = scenario.name;
        let get = |t: &TargetResult, f: &dyn Fn(&ScenarioResult) -> f64| {
            t.scenario(name).map_or(f64::NAN, f)
        };
        if scenario.bulk {
            let what = if name == BULK_INVALID {
                "answered with its issues"
            } else {
                "validated"
            };
            rows.push(Row {
                metric: format!("{name}: MB/s {what}"),
                values: each(&|t| get(t, &ScenarioResult::mb_per_s)),
                show: num,
            });
        }
        rows.push(Row {
            metric: format!("{name}: calls/s"),
            values: each(&|t| get(t, &ScenarioResult::throughput)),
            show: num,
        });
        rows.push(Row {
            metric: format!("{name}: p50 ms"),
            values: each(&|t| get(t, &|s| s.outcome.quantile_ms(0.5))),
            show: num,
        });
        rows.push(Row {
            metric: format!("{name}: p99 ms"),
            values: each(&|t| get(t, &|s| s.outcome.quantile_ms(0.99))),
            show: num,
        });
        rows.push(Row {
            metric: format!("{name}: errors"),
            values: each(&|t| get(t, &|s| s.outcome.errors as f64)),
            show: count,
        });
        rows.push(Row {
            metric: format!("{name}: CPU µs per call"),
            values: each(&|t| get(t, &ScenarioResult::server_cpu_us)),
            show: num,
        });
        if !scenario.bulk {
            // The ceiling is the last target: what a call costs above the
            // HTTP alone.
            let ceiling = targets
                .last()
                .map_or(f64::NAN, |c| get(c, &ScenarioResult::server_cpu_us));
            rows.push(Row {
                metric: format!("{name}: CPU µs per call over bare hyper"),
                values: each(&|t| get(t, &ScenarioResult::server_cpu_us) - ceiling),
                show: num,
            });
        } else {
            rows.push(Row {
                metric: format!("{name}: RSS peak growth MB"),
                values: each(&|t| get(t, &|s| mb(s.rss_growth_kib()))),
                show: num,
            });
        }
    }
    rows.push(Row {
        metric: "start → listening ms (median)".to_owned(),
        values: each(&TargetResult::start_median_ms),
        show: num,
    });
    rows.push(Row {
        metric: "RSS idle MB".to_owned(),
        values: each(&|t| mb(t.rss_idle_kib)),
        show: num,
    });
    for (name, label) in [("echo c=64", "echo c=64"), (BULK, "bulk 1 MiB")] {
        rows.push(Row {
            metric: format!("RSS peak under load ({label}) MB"),
            values: each(&|t| t.scenario(name).map_or(f64::NAN, |s| mb(s.rss_peak_kib))),
            show: num,
        });
    }
    rows
}

/// A performance goal of the service, checked against the numbers.
struct Goal {
    what: String,
    measured: String,
    met: bool,
}

/// The goals, for `ours` against every Python target (the first is the
/// one the goal names; the others are shown for reference) and `ceiling`.
fn goals(ours: &TargetResult, pythons: &[&TargetResult], ceiling: &TargetResult) -> Vec<Goal> {
    let at = |t: &TargetResult, name: &str, f: &dyn Fn(&ScenarioResult) -> f64| {
        t.scenario(name).map_or(f64::NAN, f)
    };
    let echo64 = |t: &TargetResult| at(t, "echo c=64", &ScenarioResult::throughput);
    let mut goals: Vec<Goal> = pythons
        .iter()
        .enumerate()
        .map(|(i, python)| {
            let ratio = echo64(ours) / echo64(python);
            Goal {
                what: format!(
                    "echo c=64 throughput ≥ 20× {}{}",
                    short_name(python),
                    if i == 0 { "" } else { " (reference)" }
                ),
                measured: format!("{ratio:.1}×"),
                met: ratio >= 20.0,
            }
        })
        .collect();
    let vs_ceiling = echo64(ours) / echo64(ceiling);
    let cpu64 = |t: &TargetResult| at(t, "echo c=64", &ScenarioResult::server_cpu_us);
    let over_ceiling = cpu64(ours) - cpu64(ceiling);
    let p99 = at(ours, "echo c=64", &|s| s.outcome.quantile_ms(0.99));
    let start = ours.start_median_ms();
    let idle = mb(ours.rss_idle_kib);
    let valid = at(ours, BULK, &ScenarioResult::mb_per_s);
    let invalid = at(ours, BULK_INVALID, &ScenarioResult::mb_per_s);
    let growth = at(ours, BULK, &|s| s.rss_growth_kib() as f64 / 1024.0);
    goals.extend([
        Goal {
            what: "echo c=64 throughput ≥ 85 % of bare hyper".into(),
            measured: format!("{:.0} %", vs_ceiling * 100.0),
            met: vs_ceiling >= 0.85,
        },
        Goal {
            what: "echo c=64 CPU per call ≤ bare hyper's + 1.6 µs".into(),
            measured: format!("+{over_ceiling:.1} µs"),
            met: over_ceiling <= 1.6,
        },
        Goal {
            what: "echo c=64 p99 ≤ 1 ms".into(),
            measured: format!("{p99:.2} ms"),
            met: p99 <= 1.0,
        },
        Goal {
            what: "start → listening ≤ 10 ms".into(),
            measured: format!("{start:.1} ms"),
            met: start <= 10.0,
        },
        Goal {
            what: "idle RSS ≤ 10 MB".into(),
            measured: format!("{idle:.1} MB"),
            met: idle <= 10.0,
        },
        Goal {
            what: "1 MiB valid input ≥ 300 MB/s".into(),
            measured: format!("{valid:.0} MB/s"),
            met: valid >= 300.0,
        },
        Goal {
            what: "1 MiB invalid input answered with its issues ≥ 200 MB/s".into(),
            measured: format!("{invalid:.0} MB/s"),
            met: invalid >= 200.0,
        },
        Goal {
            what: "peak RSS growth of one 1 MiB call ≤ 8 MiB".into(),
            measured: format!("{growth:.1} MiB"),
            met: growth <= 8.0,
        },
    ]);
    goals
}

/// A target's name without its parenthesis: `Python (kindgi 0.1.10)` → `Python`.
fn short_name(target: &TargetResult) -> &str {
    target.name.split(" (").next().unwrap_or_default()
}

/// How to read the numbers.
const READING: &str = "Closed loop: each connection sends its next call when the last one is answered, \
so at c connections latency is about c ÷ throughput (Little's law) and p50/p99 at c=64 mostly measure \
queueing. CPU µs per call is the target's user + system time over the whole load (warm-up included) \
divided by the calls it answered; it is the cost a billed CPU sees. MB are 10^6 bytes. \
Ratios are ours ÷ the other target for every row: above 1 is more for ours.";

/// The whole report. `targets` are ours first, then its variants, the
/// Python reference services, and the ceilings, bare hyper last; `context`
/// lines (machine, versions, load) go first.
/// How the machine was used: its CPUs, and whether targets and the load
/// generator had one each.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Machine {
    /// The machine's CPUs (counted before any pinning).
    pub(crate) cores: usize,
    /// Per-core mode: targets on one CPU, the load generator on another.
    pub(crate) per_core: bool,
}

pub(crate) fn markdown(
    title: &str,
    context: &[String],
    targets: &[TargetResult],
    machine: Machine,
) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# {title}\n");
    for line in context {
        let _ = writeln!(out, "- {line}");
    }
    let (Some(ours), Some(ceiling)) = (targets.first(), targets.last()) else {
        return out;
    };
    if targets.len() < 3 {
        return out;
    }
    let pythons: Vec<&TargetResult> = targets
        .iter()
        .filter(|t| t.role == Role::Reference)
        .collect();
    let mut header = String::from("| metric |");
    let mut rule = String::from("|---|");
    for t in targets {
        let _ = write!(header, " {} |", t.name);
        rule.push_str("--:|");
    }
    for t in &targets[1..] {
        let _ = write!(header, " ours ÷ {} |", short_name(t));
        rule.push_str("--:|");
    }
    let _ = writeln!(out, "\n## Results\n\n{READING}\n\n{header}\n{rule}");
    for row in rows(targets) {
        let mut line = format!("| {} |", row.metric);
        for &value in &row.values {
            let _ = write!(line, " {} |", (row.show)(value));
        }
        for &value in &row.values[1..] {
            let _ = write!(line, " {} |", ratio(row.values[0], value));
        }
        let _ = writeln!(out, "{line}");
    }
    let _ = writeln!(
        out,
        "\n## Goals\n\n| goal | measured | met |\n|---|--:|:-:|"
    );
    for goal in goals(ours, &pythons, ceiling) {
        let _ = writeln!(
            out,
            "| {} | {} | {} |",
            goal.what,
            goal.measured,
            if goal.met { "yes" } else { "**no**" }
        );
    }
    let sharing = if machine.per_core {
        "Each had a core of its own (per-core mode): a target at 1.00 used all of its core."
    } else {
        "The two share the machine, so the ceiling column is also the load generator's own ceiling."
    };
    let _ = writeln!(
        out,
        "\n## Where the CPU went\n\nCores busy during each load (1.00 = one core of {}): target / load generator. {sharing}\n",
        machine.cores,
    );
    let _ = writeln!(
        out,
        "| scenario |{}\n|---|{}",
        targets
            .iter()
            .map(|t| format!(" {} |", t.name))
            .collect::<String>(),
        "--:|".repeat(targets.len())
    );
    for scenario in &ours.scenarios {
        let mut line = format!("| {} |", scenario.name);
        for t in targets {
            let cell = t.scenario(scenario.name).map_or_else(
                || "–".to_owned(),
                |s| {
                    let cores = |c: Option<f64>| c.map_or("–".to_owned(), |c| format!("{c:.2}"));
                    format!("{} / {}", cores(s.server_cores()), cores(s.loadgen_cores()))
                },
            );
            let _ = write!(line, " {cell} |");
        }
        let _ = writeln!(out, "{line}");
    }
    let _ = writeln!(out, "\nStarts (ms, every one, in order):\n");
    for t in targets {
        let all: Vec<String> = t.starts_ms.iter().map(|v| format!("{v:.1}")).collect();
        let _ = writeln!(out, "- {}: {}", t.name, all.join(" "));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
        assert!(median(&[]).is_nan());
    }

    fn target(name: &str, role: Role, calls_per_s: u64, start_ms: f64) -> TargetResult {
        let scenario = |name, bulk| ScenarioResult {
            name,
            body_bytes: 1_000_000,
            bulk,
            outcome: Outcome {
                ok: calls_per_s,
                sent: calls_per_s,
                elapsed: Duration::from_secs(1),
                latencies_us: vec![1000, 2000],
                ..Outcome::default()
            },
            rounds: vec![calls_per_s as f64],
            rss_before_kib: 8_000,
            rss_peak_kib: 10_000,
            server_cpu: Some(Duration::from_millis(500)),
            loadgen_cpu: Some(Duration::from_millis(250)),
            wall: Duration::from_millis(500),
        };
        TargetResult {
            name: name.to_owned(),
            role,
            starts_ms: vec![start_ms],
            rss_idle_kib: 10_000,
            scenarios: vec![
                scenario("echo c=64", false),
                scenario("bulk 1 MiB c=1", true),
            ],
        }
    }

    #[test]
    fn report_has_a_ratio_column_per_other_target_and_checks_the_goals() {
        let targets = [
            target("ours (Rust)", Role::Ours, 40_000, 5.0),
            target("ours, plain input", Role::Variant, 20_000, 5.0),
            target("Python (kindgi 0.1.10)", Role::Reference, 1_000, 400.0),
            target(
                "Python + TCP_NODELAY (kindgi 0.1.10)",
                Role::Reference,
                2_500,
                400.0,
            ),
            target("bare hyper + call record", Role::Ceiling, 44_000, 1.0),
            target("bare hyper (ceiling)", Role::Ceiling, 50_000, 1.0),
        ];
        let machine = Machine {
            cores: 2,
            per_core: true,
        };
        let md = markdown("t", &["context".to_owned()], &targets, machine);
        assert!(md.contains(
            "| ours ÷ ours, plain input | ours ÷ Python | ours ÷ Python + TCP_NODELAY | ours ÷ bare hyper + call record | ours ÷ bare hyper |"
        ));
        assert!(md.contains(
            "| echo c=64: calls/s | 40,000 | 20,000 | 1,000 | 2,500 | 44,000 | 50,000 | 2.00× | 40× | 16× | 0.91× | 0.80× |"
        ));
        assert!(md.contains("| echo c=64 throughput ≥ 20× Python | 40.0× | yes |"));
        assert!(md.contains(
            "| echo c=64 throughput ≥ 20× Python + TCP_NODELAY (reference) | 16.0× | **no** |"
        ));
        assert!(md.contains("| echo c=64 throughput ≥ 85 % of bare hyper | 80 % | **no** |"));
        // Only the references are goals' Pythons.
        assert!(!md.contains("20× ours, plain input"));
        assert!(md.contains(
            "| echo c=64: CPU µs per call over bare hyper | 2.50 | 15.0 | 490 | 190 | 1.36 | 0.00 |"
        ));
        assert!(md.contains("| bulk 1 MiB c=1: RSS peak growth MB | 2.05 | "));
        assert!(md.contains("| peak RSS growth of one 1 MiB call ≤ 8 MiB | 2.0 MiB | yes |"));
        assert!(
            md.contains("| echo c=64 CPU per call ≤ bare hyper's + 1.6 µs | +2.5 µs | **no** |")
        );
        assert!(md.contains("| bulk 1 MiB c=1: MB/s validated | 40,000 |"));
        assert!(md.contains(
            "(1.00 = one core of 2): target / load generator. Each had a core of its own"
        ));
    }

    #[test]
    fn rounds_pool_counts_and_take_the_median_rate() {
        let round = |rate: f64, latency: u32| ScenarioResult {
            name: "echo c=1",
            body_bytes: 10,
            bulk: false,
            outcome: Outcome {
                ok: 100,
                sent: 110,
                elapsed: Duration::from_secs(1),
                latencies_us: vec![latency],
                ..Outcome::default()
            },
            rounds: vec![rate],
            rss_before_kib: u64::from(latency) * 10,
            rss_peak_kib: latency.into(),
            server_cpu: Some(Duration::from_millis(11)),
            loadgen_cpu: Some(Duration::from_millis(5)),
            wall: Duration::from_secs(1),
        };
        let mut pooled = round(100.0, 3);
        pooled.absorb(round(900.0, 1));
        pooled.absorb(round(200.0, 2));
        assert_eq!(pooled.throughput(), 200.0);
        assert_eq!(pooled.outcome.latencies_us, [1, 2, 3]);
        assert_eq!(pooled.outcome.sent, 330);
        assert_eq!(pooled.rss_peak_kib, 3);
        assert_eq!(pooled.rss_before_kib, 10);
        assert_eq!(
            pooled.server_cpu_per_call(),
            Some(Duration::from_micros(100))
        );
        assert_eq!(pooled.loadgen_cores(), Some(0.005));
    }

    #[test]
    fn formatting() {
        assert_eq!(num(123_456.7), "123,457");
        assert_eq!(num(12.345), "12.3");
        assert_eq!(num(0.1234), "0.12");
        assert_eq!(ratio(30.0, 1.0), "30×");
        assert_eq!(ratio(0.8, 1.0), "0.80×");
        assert_eq!(ratio(1.0, 0.0), "–");
    }
}
