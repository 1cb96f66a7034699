//! `kindgi-bench`: measures the pack services side by side on this machine
//! — ours (the conformance fixture pack, and the bench pack for the 1 MiB
//! scenario), the Python reference service, and a bare hyper server that
//! answers the same bytes (the HTTP ceiling) — with one load generator, on
//! 127.0.0.1 only, and writes the report as Markdown.
//!
//! `bench/run` builds everything and calls this; see `bench/README.md`.

mod load;
mod pin;
mod report;
mod scenario;
mod service;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use bytes::Bytes;
use clap::Parser;
use http::{HeaderMap, StatusCode};

use crate::load::{Load, Protocol};
use crate::report::{Role, ScenarioResult, TargetResult};
use crate::scenario::{Pack, Scenario};
use crate::service::{Launch, RssSampler, Service};

/// The pack token every target is started with.
const TOKEN: &str = "bench-token-3f9c2a";

/// The headers of a pack service answer the ceiling repeats.
const ANSWER_HEADERS: [&str; 3] = [
    "content-type",
    "kindgi-duration-ms",
    "kindgi-artifact-version",
];

/// Measure the pack services side by side.
#[derive(Debug, Parser)]
#[command(version, about)]
enum Cli {
    /// Measure every target and write the report (what `bench/run` runs).
    Run(Box<Args>),
    /// Load one running service with one scenario — e.g. while profiling it.
    Load(LoadArgs),
}

/// `kindgi-bench run`.
#[derive(Debug, clap::Args)]
#[command(args_override_self = true)]
struct Args {
    /// Our fixture pack binary (`conformance-pack`).
    #[arg(long)]
    pack: PathBuf,
    /// Its index.
    #[arg(long)]
    pack_index: PathBuf,
    /// The bench pack binary (`kindgi-bench-pack`), for the bulk scenario.
    #[arg(long)]
    bulk_pack: PathBuf,
    /// Its index.
    #[arg(long)]
    bulk_index: PathBuf,
    /// The fixture pack built without its `fast-input` feature: measured
    /// beside ours as "ours, plain input" when given (the A/B of the input's
    /// fast reader).
    #[arg(long, requires = "bulk_pack_plain")]
    pack_plain: Option<PathBuf>,
    /// The bulk pack built without its `fast-input` feature.
    #[arg(long, requires = "pack_plain")]
    bulk_pack_plain: Option<PathBuf>,
    /// The Python interpreter that has `kindgi` installed.
    #[arg(long)]
    python: PathBuf,
    /// The Python pack's index.
    #[arg(long)]
    python_index: PathBuf,
    /// The Python pack's folder (`--module-root`).
    #[arg(long)]
    python_root: PathBuf,
    /// The Python package the Python targets run, for their names.
    #[arg(long, default_value = "kindgi 0.1.10")]
    python_package: String,
    /// A script that serves the Python pack with `TCP_NODELAY` on its
    /// connections: measured as a fourth target when given.
    #[arg(long)]
    python_nodelay: Option<PathBuf>,
    /// The bare hyper server binary (`bare-hyper`).
    #[arg(long)]
    ceiling: PathBuf,
    /// A folder for the ceiling's answer files.
    #[arg(long)]
    work: PathBuf,
    /// Where to write the report (it is printed either way).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Rounds per scenario: the targets take turns in each.
    #[arg(long, default_value_t = 3)]
    rounds: usize,
    /// Measured seconds of a round (at least).
    #[arg(long, default_value_t = 1.5)]
    seconds: f64,
    /// Warm-up seconds of a round.
    #[arg(long, default_value_t = 0.5)]
    warmup: f64,
    /// Starts per target for start → listening.
    #[arg(long, default_value_t = 20)]
    starts: usize,
    /// Worker threads of the load generator (1: a current-thread runtime).
    #[arg(long, default_value_t = 2)]
    loadgen_threads: usize,
    /// Per-core mode: every target pinned to CPU 0, the load generator (one
    /// thread) to CPU 1, with `taskset`; needs two CPUs.
    #[arg(long)]
    per_core: bool,
    /// A line for the report's context (repeatable).
    #[arg(long)]
    context: Vec<String>,
}

/// A scenario's request, for `kindgi-bench load`.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum Which {
    /// `conformance.echo`.
    Echo,
    /// `conformance.checks.min-length`.
    Check,
    /// `bench.bulk`, 1 MiB.
    Bulk,
    /// `bench.bulk`, 1 MiB with one wrong value.
    BulkInvalid,
}

/// `kindgi-bench load`.
#[derive(Debug, clap::Args)]
struct LoadArgs {
    /// The running service's address.
    #[arg(long)]
    addr: std::net::SocketAddr,
    /// What to send.
    #[arg(long, value_enum)]
    scenario: Which,
    /// Senders, one request in flight on each (over HTTP/1.1, a
    /// connection each).
    #[arg(long, default_value_t = 64)]
    concurrency: usize,
    /// Send over h2c (HTTP/2 with prior knowledge), the senders' streams
    /// spread over this many connections.
    #[arg(long, value_name = "CONNECTIONS")]
    h2c: Option<usize>,
    /// How long to send.
    #[arg(long, default_value_t = 10.0)]
    seconds: f64,
    /// The service's pack token.
    #[arg(long, default_value = TOKEN)]
    token: String,
    /// Worker threads of the load generator (1: a current-thread runtime).
    #[arg(long, default_value_t = 2)]
    loadgen_threads: usize,
}

/// How a target is started: its service for each pack.
#[derive(Debug)]
struct Target {
    name: String,
    role: Role,
    /// Whether it speaks h2c: the h2c scenarios skip a target that doesn't.
    h2c: bool,
    fixture: Launch,
    /// The bulk scenario's service; `None`: the fixture service has the tool.
    bulk: Option<Launch>,
}

fn serve(program: &Path, index: &Path) -> Launch {
    Launch {
        program: program.to_owned(),
        args: vec![
            "serve".into(),
            "--index".into(),
            index.display().to_string(),
            "--host".into(),
            "127.0.0.1".into(),
        ],
        env: Vec::new(),
    }
}

fn ceiling(program: &Path, body_file: &Path, headers: &HeaderMap, record: bool) -> Launch {
    let mut args = vec![
        "--host".into(),
        "127.0.0.1".into(),
        "--body-file".into(),
        body_file.display().to_string(),
    ];
    if record {
        args.push("--record".into());
        args.push("conformance.echo".into());
    }
    for name in ANSWER_HEADERS {
        if let Some(value) = headers.get(name).and_then(|v| v.to_str().ok()) {
            args.push("--header".into());
            args.push(format!("{name}: {value}"));
        }
    }
    Launch {
        program: program.to_owned(),
        args,
        env: Vec::new(),
    }
}

/// A load generator's runtime: one thread, or a pool.
fn loadgen_runtime(threads: usize) -> Result<tokio::runtime::Runtime> {
    let runtime = if threads <= 1 {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?
    } else {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(threads)
            .enable_all()
            .build()?
    };
    Ok(runtime)
}

/// Sends the scenario's request once and checks the answer; its headers
/// and exact bytes.
fn check_answer(
    rt: &tokio::runtime::Runtime,
    service: &Service,
    scenario: &Scenario,
    target: &str,
) -> Result<(HeaderMap, Bytes)> {
    let (status, headers, body) = rt.block_on(load::once(
        service.addr,
        scenario.protocol,
        TOKEN,
        &scenario.body,
    ))?;
    let parsed: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
    if status != StatusCode::OK || !scenario.expect.matches(&parsed) {
        let text = String::from_utf8_lossy(&body);
        bail!(
            "{target}, {}: expected 200 {}, got {status} {}",
            scenario.name,
            scenario.expect,
            text.chars().take(400).collect::<String>()
        );
    }
    Ok((headers, body))
}

/// Runs one round of a scenario's load against a running service.
fn measure(
    rt: &tokio::runtime::Runtime,
    service: &Service,
    scenario: &Scenario,
    expect: &Bytes,
    args: &Args,
) -> Result<ScenarioResult> {
    // A slow target still gets a few samples; nothing runs unbounded.
    let (min_requests, limit) = if scenario.bulk {
        (2, 30.0)
    } else {
        (100, 20.0)
    };
    let load = Load {
        addr: service.addr,
        protocol: scenario.protocol,
        token: TOKEN.to_owned(),
        body: scenario.body.clone(),
        expect: expect.clone(),
        concurrency: scenario.concurrency,
        warmup: Duration::from_secs_f64(args.warmup),
        duration: Duration::from_secs_f64(args.seconds),
        min_requests,
        limit: Duration::from_secs_f64(limit),
    };
    let rss_before_kib = service.rss_kib().unwrap_or(0);
    let sampler = RssSampler::start(service.pid());
    let server_before = service.cpu_time();
    let self_before = service::cpu_time("/proc/self/stat");
    let began = Instant::now();
    let outcome = rt.block_on(load::run(load))?;
    let wall = began.elapsed();
    let self_after = service::cpu_time("/proc/self/stat");
    let server_after = service.cpu_time();
    let spent = |before: Option<Duration>, after: Option<Duration>| {
        before
            .zip(after)
            .map(|(before, after)| after.saturating_sub(before))
    };
    Ok(ScenarioResult {
        name: scenario.name,
        body_bytes: scenario.body.len(),
        bulk: scenario.bulk,
        rounds: vec![outcome.throughput()],
        outcome,
        rss_before_kib,
        rss_peak_kib: sampler.finish(),
        server_cpu: spent(server_before, server_after),
        loadgen_cpu: spent(self_before, self_after),
        wall,
    })
}

fn progress(target: &str, result: &ScenarioResult) {
    let o = &result.outcome;
    let rounds: Vec<String> = result.rounds.iter().map(|r| format!("{r:.0}")).collect();
    let mb = if result.bulk {
        format!(" {:.0} MB/s", result.mb_per_s())
    } else {
        String::new()
    };
    eprintln!(
        "  {:<28} {:<26} {:>9.0} calls/s{mb} (rounds {})  p50 {:.3} ms  p99 {:.3} ms  errors {}  ({} calls)",
        result.name,
        target,
        result.throughput(),
        rounds.join(" "),
        o.quantile_ms(0.5),
        o.quantile_ms(0.99),
        o.errors,
        o.ok + o.errors
    );
}

/// `VmRSS` after boot and one echo call, settled.
fn idle_rss(
    rt: &tokio::runtime::Runtime,
    service: &Service,
    echo: &Scenario,
    target: &str,
) -> Result<u64> {
    check_answer(rt, service, echo, target)?;
    std::thread::sleep(Duration::from_millis(300));
    service.rss_kib().context("reading VmRSS")
}

fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}

fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find_map(|l| l.strip_prefix("model name"))
                .map(|m| m.trim_start_matches([' ', '\t', ':']).to_owned())
        })
        .unwrap_or_else(|| "unknown CPU".to_owned())
}

fn python_launch(args: &Args, entry: &[&str]) -> Launch {
    let mut argv: Vec<String> = entry.iter().map(|&a| a.to_owned()).collect();
    argv.extend([
        "--index".into(),
        args.python_index.display().to_string(),
        "--module-root".into(),
        args.python_root.display().to_string(),
        "--host".into(),
        "127.0.0.1".into(),
    ]);
    Launch {
        program: args.python.clone(),
        args: argv,
        env: Vec::new(),
    }
}

/// The targets that are pack services: ours first, its variants, then
/// Python's. `collector`: the address of the OTLP sink the target
/// exporting spans sends them to.
fn service_targets(args: &Args, collector: std::net::SocketAddr) -> Vec<Target> {
    let exporting = |launch: Launch| Launch {
        env: vec![(
            "OTEL_EXPORTER_OTLP_ENDPOINT".to_owned(),
            format!("http://{collector}"),
        )],
        ..launch
    };
    let mut targets = vec![
        Target {
            name: "ours (Rust)".to_owned(),
            role: Role::Ours,
            h2c: true,
            fixture: serve(&args.pack, &args.pack_index),
            bulk: Some(serve(&args.bulk_pack, &args.bulk_index)),
        },
        Target {
            name: "ours, exporting spans".to_owned(),
            role: Role::Variant,
            h2c: true,
            fixture: exporting(serve(&args.pack, &args.pack_index)),
            bulk: Some(exporting(serve(&args.bulk_pack, &args.bulk_index))),
        },
        Target {
            name: format!("Python ({})", args.python_package),
            role: Role::Reference,
            h2c: false,
            fixture: python_launch(args, &["-m", "kindgi.pack", "serve"]),
            bulk: None,
        },
    ];
    if let (Some(pack), Some(bulk)) = (&args.pack_plain, &args.bulk_pack_plain) {
        targets.insert(
            1,
            Target {
                name: "ours, plain input".to_owned(),
                role: Role::Variant,
                h2c: true,
                fixture: serve(pack, &args.pack_index),
                bulk: Some(serve(bulk, &args.bulk_index)),
            },
        );
    }
    if let Some(script) = &args.python_nodelay {
        let script = script.display().to_string();
        targets.push(Target {
            name: format!("Python + TCP_NODELAY ({})", args.python_package),
            role: Role::Reference,
            h2c: false,
            fixture: python_launch(args, &[script.as_str()]),
            bulk: None,
        });
    }
    targets
}

/// A pack service target's running processes.
#[derive(Debug)]
struct Running {
    fixture: Service,
    bulk: Option<Service>,
}

impl Running {
    fn start(target: &Target) -> Result<Self> {
        Ok(Self {
            fixture: Service::start(&target.fixture, TOKEN)?,
            bulk: target
                .bulk
                .as_ref()
                .map(|launch| Service::start(launch, TOKEN))
                .transpose()?,
        })
    }

    fn for_pack(&self, pack: Pack) -> &Service {
        match pack {
            Pack::Fixture => &self.fixture,
            Pack::Bulk => self.bulk.as_ref().unwrap_or(&self.fixture),
        }
    }
}

fn run(args: &Args) -> Result<String> {
    std::fs::create_dir_all(&args.work)?;
    // Counted before pinning: a pinned process sees only its own CPU.
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let pin = if args.per_core {
        Some(pin::PerCore::take()?)
    } else {
        None
    };
    let loadgen_threads = if pin.is_some() {
        1
    } else {
        args.loadgen_threads
    };
    let rt = loadgen_runtime(loadgen_threads)?;
    let launch = |launch: &Launch| match &pin {
        Some(pin) => pin.target(launch),
        None => launch.clone(),
    };
    let scenarios = scenario::all();
    let echo = &scenarios[0];
    let load_before = loadavg();
    let wall = Instant::now();
    // The OTLP/HTTP collector of the target exporting spans: a bare hyper
    // server answering every export with an empty (successful) protobuf
    // answer. Not pinned: it shares the load generator's core, so what the
    // target's core does is the cost of exporting alone.
    let empty = args.work.join("otlp-answer.bin");
    std::fs::write(&empty, b"")?;
    let mut sink_headers = HeaderMap::new();
    sink_headers.insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/x-protobuf"),
    );
    let collector = Service::start(&ceiling(&args.ceiling, &empty, &sink_headers, false), TOKEN)
        .context("starting the OTLP sink")?;
    let targets: Vec<Target> = service_targets(args, collector.addr)
        .into_iter()
        .map(|t| Target {
            fixture: launch(&t.fixture),
            bulk: t.bulk.as_ref().map(launch),
            name: t.name,
            role: t.role,
            h2c: t.h2c,
        })
        .collect();
    // The ceilings, bare hyper last: with the `call` record a pack service
    // must write for every call (the honest ceiling), and without.
    const CEILINGS: [(&str, bool); 2] = [
        ("bare hyper + call record", true),
        ("bare hyper (ceiling)", false),
    ];

    // The ceilings' starts answer a placeholder; each scenario restarts
    // them with our service's exact answer to that scenario.
    let placeholder = args.work.join("answer-start.json");
    std::fs::write(&placeholder, scenario::echo_body())?;
    let ceiling_starts = CEILINGS.map(|(_, record)| {
        launch(&ceiling(
            &args.ceiling,
            &placeholder,
            &HeaderMap::new(),
            record,
        ))
    });

    // 1. Start → listening, the targets taking turns.
    eprintln!("start → listening, {} starts per target", args.starts);
    let launches: Vec<&Launch> = targets
        .iter()
        .map(|t| &t.fixture)
        .chain(&ceiling_starts)
        .collect();
    let mut starts: Vec<Vec<f64>> = vec![Vec::new(); launches.len()];
    for _ in 0..args.starts {
        for (launch, times) in launches.iter().zip(&mut starts) {
            let service = Service::start(launch, TOKEN)?;
            times.push(service.started_in.as_secs_f64() * 1000.0);
        }
    }
    let names: Vec<(&str, Role)> = targets
        .iter()
        .map(|t| (t.name.as_str(), t.role))
        .chain(CEILINGS.map(|(name, _)| (name, Role::Ceiling)))
        .collect();
    for ((name, _), times) in names.iter().zip(&starts) {
        eprintln!("  {name:<34} median {:.1} ms", report::median(times));
    }

    // 2. The long-running services, and their idle memory.
    let running = targets
        .iter()
        .map(Running::start)
        .collect::<Result<Vec<_>>>()?;
    let mut idle = Vec::new();
    for (target, service) in targets.iter().zip(&running) {
        idle.push(idle_rss(&rt, &service.fixture, echo, &target.name)?);
    }
    let mut results: Vec<Vec<ScenarioResult>> = vec![Vec::new(); names.len()];

    // 3. Each scenario on each target, in rounds: the targets take turns
    //    within every round, so a burst of other work on the machine hits
    //    them alike, and the median round speaks for each. Ours answers
    //    first: the ceiling repeats our exact answer.
    for (n, scenario) in scenarios.iter().enumerate() {
        eprintln!("{}", scenario.name);
        // Each measured service with its index among the report's
        // targets: an h2c scenario skips the targets that speak HTTP/1.1
        // only.
        let h2c = matches!(scenario.protocol, Protocol::H2c { .. });
        let mut services: Vec<(usize, &str, &Service, Bytes)> = Vec::new();
        let mut ours_answer = None;
        for (at, (target, service)) in targets.iter().zip(&running).enumerate() {
            if h2c && !target.h2c {
                continue;
            }
            let service = service.for_pack(scenario.pack);
            let (headers, bytes) = check_answer(&rt, service, scenario, &target.name)?;
            ours_answer.get_or_insert((headers, bytes.clone()));
            services.push((at, &target.name, service, bytes));
        }
        let (headers, ours_bytes) = ours_answer.context("no pack service target")?;
        let answer = args.work.join(format!("answer-{n}.json"));
        std::fs::write(&answer, &ours_bytes)?;
        let ceilings = CEILINGS
            .iter()
            .map(|&(_, record)| {
                Service::start(
                    &launch(&ceiling(&args.ceiling, &answer, &headers, record)),
                    TOKEN,
                )
            })
            .collect::<Result<Vec<_>>>()?;
        for (i, (&(name, _), bare)) in CEILINGS.iter().zip(&ceilings).enumerate() {
            if n == 0 {
                idle.push(idle_rss(&rt, bare, scenario, name)?);
            }
            let (_, bare_bytes) = check_answer(&rt, bare, scenario, name)?;
            if bare_bytes != ours_bytes {
                bail!("{name} answered other bytes than ours");
            }
            services.push((targets.len() + i, name, bare, bare_bytes));
        }
        let mut pooled: Vec<Option<ScenarioResult>> = vec![None; services.len()];
        for _ in 0..args.rounds.max(1) {
            for ((_, _, service, expect), pooled) in services.iter().zip(&mut pooled) {
                let round = measure(&rt, service, scenario, expect, args)?;
                match pooled {
                    Some(result) => result.absorb(round),
                    None => *pooled = Some(round),
                }
            }
        }
        for ((at, name, _, _), result) in services.iter().zip(pooled) {
            let result = result.context("no round measured")?;
            progress(name, &result);
            results[*at].push(result);
        }
    }
    drop(running);
    drop(collector);

    let report_targets: Vec<TargetResult> = names
        .iter()
        .zip(starts)
        .zip(idle)
        .zip(results)
        .map(
            |((((name, role), starts_ms), rss_idle_kib), scenarios)| TargetResult {
                name: (*name).to_owned(),
                role: *role,
                starts_ms,
                rss_idle_kib,
                scenarios,
            },
        )
        .collect();
    let mut context = vec![
        format!(
            "Machine: {}, {} cores; load average (1/5/15 min) {} before, {} after",
            cpu_model(),
            cores,
            load_before,
            loadavg()
        ),
        format!(
            "Load generator: hyper client, keep-alive HTTP/1.1 (a connection per sender) or, in the h2c rows, HTTP/2 with prior knowledge (64 streams on 1 or 8 connections; only the targets that speak it), {} thread(s), on 127.0.0.1; per scenario {} rounds, the targets taking turns in each; a round is {} s of warm-up, then at least {} s measured (at least 100 calls, bulk 2, at most 20 s, bulk 30 s); calls/s is the median round, latencies pool every round",
            loadgen_threads,
            args.rounds.max(1),
            args.warmup,
            args.seconds
        ),
        match &pin {
            Some(pin) => pin.describe(),
            None => "Cores shared: targets and the load generator run wherever the scheduler puts them (`--per-core` pins them apart)".to_owned(),
        },
        format!("Measuring took {:.0} s", wall.elapsed().as_secs_f64()),
        format!(
            "What bounds bulk 1 MiB: serde_json alone reads its body into a `serde_json::Value` (the tree the schema is checked on) at {:.0} MB/s, in the load generator's process on one core (median of 20 parses)",
            value_parse_mbps()
        ),
    ];
    context.push("\"ours, exporting spans\" is ours with `OTEL_EXPORTER_OTLP_ENDPOINT` set: every call a span (and the metrics) exported over OTLP/HTTP to a bare hyper server that answers each export with an empty protobuf, running beside the load generator (not on the targets' core)".to_owned());
    context.extend(args.context.iter().cloned());
    Ok(report::markdown(
        "Pack service benchmark",
        &context,
        &report_targets,
        report::Machine {
            cores,
            per_core: pin.is_some(),
        },
    ))
}

/// How fast serde_json alone reads the 1 MiB scenario's body into a
/// `serde_json::Value` — the first step of every call, and the tree the
/// schema is checked on — in MB/s (10^6 bytes) on one core, median of 20.
fn value_parse_mbps() -> f64 {
    let (body, _) = scenario::bulk_body(scenario::MIB);
    let mut rates: Vec<f64> = (0..20)
        .map(|_| {
            let began = Instant::now();
            let parsed = serde_json::from_slice::<serde_json::Value>(&body);
            let seconds = began.elapsed().as_secs_f64();
            drop(std::hint::black_box(parsed));
            body.len() as f64 / 1e6 / seconds
        })
        .collect();
    rates.sort_by(f64::total_cmp);
    rates[rates.len() / 2]
}

/// `kindgi-bench load`: one scenario against a running service, printed.
fn load_only(args: &LoadArgs) -> Result<()> {
    let rt = loadgen_runtime(args.loadgen_threads)?;
    let mut scenario = scenario::all()
        .into_iter()
        .find(|s| match args.scenario {
            Which::Echo => s.name.starts_with("echo"),
            Which::Check => s.name.starts_with("check"),
            Which::Bulk => s.name == scenario::BULK,
            Which::BulkInvalid => s.name == scenario::BULK_INVALID,
        })
        .context("no such scenario")?;
    scenario.concurrency = args.concurrency;
    let protocol = match args.h2c {
        Some(connections) => Protocol::H2c { connections },
        None => Protocol::Http1,
    };
    let (status, _, expect) =
        rt.block_on(load::once(args.addr, protocol, &args.token, &scenario.body))?;
    let parsed: serde_json::Value = serde_json::from_slice(&expect).unwrap_or_default();
    if status != StatusCode::OK || !scenario.expect.matches(&parsed) {
        bail!(
            "unexpected answer: {status} {}",
            String::from_utf8_lossy(&expect)
        );
    }
    let outcome = rt.block_on(load::run(Load {
        addr: args.addr,
        protocol,
        token: args.token.clone(),
        body: scenario.body.clone(),
        expect,
        concurrency: args.concurrency,
        warmup: Duration::ZERO,
        duration: Duration::from_secs_f64(args.seconds),
        min_requests: 0,
        limit: Duration::from_secs_f64(args.seconds),
    }))?;
    println!(
        "{:.0} calls/s  p50 {:.3} ms  p99 {:.3} ms  errors {}  ({} calls)",
        outcome.throughput(),
        outcome.quantile_ms(0.5),
        outcome.quantile_ms(0.99),
        outcome.errors,
        outcome.ok + outcome.errors
    );
    Ok(())
}

fn main() -> ExitCode {
    let args = match Cli::parse() {
        Cli::Run(args) => args,
        Cli::Load(args) => {
            return match load_only(&args) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("kindgi-bench load: {e:#}");
                    ExitCode::FAILURE
                }
            };
        }
    };
    match run(&args) {
        Ok(markdown) => {
            println!("{markdown}");
            if let Some(out) = &args.out {
                if let Err(e) = std::fs::write(out, &markdown) {
                    eprintln!("kindgi-bench: writing {}: {e}", out.display());
                    return ExitCode::FAILURE;
                }
                eprintln!("wrote {}", out.display());
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("kindgi-bench: {e:#}");
            ExitCode::FAILURE
        }
    }
}
