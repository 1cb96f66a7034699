//! `kindgi dev`: a pack built, indexed and served from its folder behind one
//! stable URL, and swapped for a new build on every save.
//!
//! ```text
//!            ┌──────────── kindgi dev ─────────────┐
//!  caller ──▶│ front (one URL, one token) ──▶ gen N │──▶ <pack> serve (PORT=0)
//!            │        │                    ╲ gen N-1 (draining after SIGTERM)
//!            │        └── dev runtime (files grants, wait links)
//!            │ watcher: what the build used ──▶ cargo build ──▶ <pack> index ──▶ boot ──▶ swap
//!            └─────────────────────────────────────┘
//! ```
//!
//! The parts, top to bottom: [`watch`] notices a save of any file the last
//! build used (cargo's dep-info, path dependencies included); [`build`] runs
//! `cargo build` and the pack's `index`; [`child`] starts `<pack> serve`
//! and waits for its `listening` record; the supervisor here swaps the
//! [`front`]'s upstream to the new process and SIGTERMs the old one, which
//! finishes its calls in flight. A build, index or boot failure leaves the
//! old process serving and prints why; a process that dies on its own is
//! restarted, [`MAX_RESTARTS`] times at most.
//!
//! The process starts with the environment a deployed pack would have
//! ([`env`](mod@env)) plus the pack's `.env`; the front adds the secrets and
//! connections of `.kindgi/secrets.env` and `.kindgi/connections.env` to
//! the calls of tools that declare them ([`local`]). A save of those files
//! rebuilds too.

mod banner;
mod build;
mod child;
mod env;
mod front;
mod local;
mod watch;

use std::collections::HashMap;
use std::future::Future;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use anyhow::{Context, bail};
use kindgi_protocol::PackIndex;
use kindgi_runtime::{DevRuntime, RuntimeConfig};
use tokio::net::TcpListener;
use tokio::sync::{mpsc, watch as signal};
use tokio::task::JoinHandle;

use crate::inspector::{Inspector, Target};
use crate::out::{counted, say};

use self::build::{BuildOptions, Failure, Inputs};
use self::child::{Children, Exited, Launch, Process};
use self::front::{Front, Upstream};
use self::local::CallValues;
use self::watch::Watched;

/// How many times in a row a process that died on its own is restarted.
pub(crate) const MAX_RESTARTS: u32 = 3;

/// How long Ctrl-C waits for the processes to drain before killing them.
const STOP_GRACE: Duration = Duration::from_secs(10);

/// A process that served this long before dying starts a fresh count of
/// restarts.
const STABLE_FOR: Duration = Duration::from_secs(30);

/// What `kindgi dev` was asked to do.
#[derive(Debug, Clone)]
pub(crate) struct Options {
    /// The pack's folder.
    pub(crate) pack_dir: PathBuf,
    /// The front's address.
    pub(crate) host: String,
    /// The front's port (0: any free one).
    pub(crate) port: u16,
    /// The front's token.
    pub(crate) token: String,
    /// The binary to serve, when the crate has several.
    pub(crate) bin: Option<String>,
    /// Build with `--release`.
    pub(crate) release: bool,
    /// How often the pack's files are polled.
    pub(crate) poll: Duration,
    /// Where indexes, binaries and the dev runtime's store live.
    pub(crate) state_dir: Option<PathBuf>,
}

/// A process serving (or ready to serve) one generation.
#[derive(Debug, Clone)]
struct Serving {
    generation: u64,
    process: Process,
    launch: Launch,
    index: Arc<PackIndex>,
    /// The secrets and connections its calls get.
    values: Arc<CallValues>,
    took: Option<Duration>,
    started: Instant,
}

/// What the supervisor reacts to.
#[derive(Debug)]
enum Event {
    /// A save.
    Changed,
    /// A build (or a restart) finished preparing a process.
    Prepared {
        outcome: Box<Result<Serving, Failure>>,
        restart: bool,
    },
}

/// A random token: 32 hex digits.
pub(crate) fn random_token() -> String {
    use rand::Rng as _;
    let bytes: [u8; 16] = rand::rng().random();
    hex::encode(bytes)
}

/// Runs `kindgi dev` until `shutdown` resolves; stops every process it
/// started before returning.
///
/// # Errors
///
/// When the pack folder has no `Cargo.toml`, or the front or the dev
/// runtime can't start. Build and boot failures are printed, not returned.
pub(crate) async fn run(
    options: Options,
    shutdown: impl Future<Output = ()>,
) -> anyhow::Result<()> {
    let pack_dir = std::fs::canonicalize(&options.pack_dir)
        .with_context(|| format!("Cannot read the pack folder {}", options.pack_dir.display()))?;
    if !pack_dir.join("Cargo.toml").is_file() {
        bail!(
            "{} has no Cargo.toml: run kindgi dev in a pack's folder, or pass --pack-dir",
            pack_dir.display()
        );
    }
    let local = pack_dir.join(".kindgi");
    let state_dir = match &options.state_dir {
        Some(dir) => dir.clone(),
        None => {
            std::fs::create_dir_all(&local)
                .with_context(|| format!("Cannot create {}", local.display()))?;
            local.join("dev")
        }
    };
    // Builds, stores, secrets and tokens are no source: keep them out of git.
    let ignore = local.join(".gitignore");
    if local.is_dir() && !ignore.exists() {
        let _ = std::fs::write(&ignore, "*\n");
    }
    std::fs::create_dir_all(&state_dir)
        .with_context(|| format!("Cannot create {}", state_dir.display()))?;
    remove_generations(&state_dir, &[]);

    let (stop, stopped) = signal::channel(false);
    let stopped_future = |mut stopped: signal::Receiver<bool>| async move {
        let _ = stopped.wait_for(|stop| *stop).await;
    };

    let runtime_dir = state_dir.join("runtime");
    let runtime = DevRuntime::open(RuntimeConfig::new(&runtime_dir)).with_context(|| {
        format!(
            "Cannot open the dev runtime's store in {}",
            runtime_dir.display()
        )
    })?;
    let runtime_listener = TcpListener::bind("127.0.0.1:0")
        .await
        .context("Cannot listen for the dev runtime")?;
    let runtime_task = tokio::spawn(
        runtime
            .clone()
            .serve(runtime_listener, stopped_future(stopped.clone())),
    );

    let listener = TcpListener::bind((options.host.as_str(), options.port))
        .await
        .with_context(|| {
            format!(
                "Cannot listen on {}:{} (is another kindgi dev running? pass --port)",
                options.host, options.port
            )
        })?;
    let addr = listener.local_addr()?;
    let url = front_url(addr);
    let token = kindgi::Token::new(options.token.clone()).context("The front's token")?;
    // The inspector calls through the front, so its calls get what any
    // call through the front gets.
    let inspector = Arc::new(Inspector::new(
        "dev",
        token.clone(),
        addr.port(),
        Target {
            url: url.clone(),
            token: kindgi_protocol::Secret::new(options.token.clone()),
        },
        runtime.clone(),
    ));
    let front = Arc::new(Front::new(token, Some(runtime)).with_inspector(Arc::clone(&inspector)));
    let front_task =
        tokio::spawn(Arc::clone(&front).serve(listener, stopped_future(stopped.clone())));
    eprintln!(
        "kindgi dev: {url} will answer for the pack in {}; building it…",
        pack_dir.display()
    );
    eprintln!(
        "kindgi dev: the inspector: {}",
        inspector.page_url(&options.token)
    );

    let (events_tx, mut events) = mpsc::unbounded_channel();
    let (exits_tx, mut exits) = mpsc::unbounded_channel();
    let (sources, watched) = signal::channel(Arc::new(Watched::pack(&pack_dir)));
    let watcher = {
        let events = events_tx.clone();
        tokio::spawn(watch::watch(watched, options.poll, move || {
            events.send(Event::Changed).is_ok()
        }))
    };
    let mut supervisor = Supervisor {
        build: BuildOptions {
            pack_dir: pack_dir.clone(),
            bin: options.bin.clone(),
            release: options.release,
        },
        state_dir,
        url,
        token: options.token.clone(),
        internal_token: random_token(),
        front: Arc::clone(&front),
        inspector,
        children: Children::default(),
        events: events_tx,
        exits: exits_tx,
        sources: Arc::new(sources),
        current: None,
        crashed: None,
        draining: HashMap::new(),
        generation: 0,
        building: None,
        pending: false,
        crashes: 0,
        banner_shown: false,
    };
    supervisor.start_build();

    tokio::pin!(shutdown);
    loop {
        tokio::select! {
            () = &mut shutdown => break,
            Some(event) = events.recv() => supervisor.on_event(event),
            Some(exited) = exits.recv() => supervisor.on_exit(&exited),
        }
    }

    eprintln!("kindgi dev: stopping…");
    watcher.abort();
    if let Some(build) = supervisor.building.take() {
        build.abort();
    }
    front.set_upstream(None);
    let _ = stop.send(true);
    supervisor.children.stop_all(STOP_GRACE).await;
    let _ = front_task.await;
    let _ = runtime_task.await;
    eprintln!("kindgi dev: stopped");
    Ok(())
}

/// The URL people call: a wildcard address is reached on 127.0.0.1.
fn front_url(addr: SocketAddr) -> String {
    if addr.ip().is_unspecified() {
        format!("http://127.0.0.1:{}", addr.port())
    } else {
        format!("http://{addr}")
    }
}

/// Removes the `gen-N` folders of `state_dir` but those of `keep`.
fn remove_generations(state_dir: &Path, keep: &[u64]) {
    let Ok(entries) = std::fs::read_dir(state_dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let generation = name
            .to_str()
            .and_then(|n| n.strip_prefix("gen-"))
            .and_then(|n| n.parse::<u64>().ok());
        if let Some(generation) = generation
            && !keep.contains(&generation)
        {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// Prints a failure's headline and details.
fn report(headline: &str, failure: &Failure) {
    eprintln!("kindgi dev: {headline}");
    for detail in &failure.details {
        if detail.contains('\n') || detail.starts_with("error") || detail.starts_with("warning") {
            eprintln!("{detail}");
        } else {
            eprintln!("  - {detail}");
        }
    }
}

/// The state of a `kindgi dev` session.
struct Supervisor {
    build: BuildOptions,
    state_dir: PathBuf,
    url: String,
    token: String,
    internal_token: String,
    front: Arc<Front>,
    /// Told of each generation and failure.
    inspector: Arc<Inspector>,
    children: Children,
    events: mpsc::UnboundedSender<Event>,
    exits: mpsc::UnboundedSender<Exited>,
    /// Where each build says what the watcher watches from then on.
    sources: Arc<signal::Sender<Arc<Watched>>>,
    /// The process the front sends calls to.
    current: Option<Serving>,
    /// The process that died, while it is being restarted.
    crashed: Option<Serving>,
    /// Swapped-out processes still finishing their calls: id → generation.
    draining: HashMap<u64, u64>,
    /// The last generation a build started.
    generation: u64,
    building: Option<JoinHandle<()>>,
    /// A save came in during the build.
    pending: bool,
    /// Restarts in a row since the last good build.
    crashes: u32,
    banner_shown: bool,
}

impl Supervisor {
    fn on_event(&mut self, event: Event) {
        match event {
            Event::Changed if self.building.is_some() => self.pending = true,
            Event::Changed => {
                eprintln!("kindgi dev: change seen; rebuilding…");
                self.start_build();
            }
            Event::Prepared { outcome, restart } => {
                if restart {
                    self.restarted(*outcome);
                } else {
                    self.built(*outcome);
                }
            }
        }
    }

    /// Builds, indexes and boots the next generation in the background.
    fn start_build(&mut self) {
        self.generation += 1;
        let generation = self.generation;
        let build = self.build.clone();
        let dir = self.state_dir.join(format!("gen-{generation}"));
        let token = self.internal_token.clone();
        let children = self.children.clone();
        let exits = self.exits.clone();
        let events = self.events.clone();
        let sources = Arc::clone(&self.sources);
        let logs = self.inspector.logs();
        self.building = Some(tokio::spawn(async move {
            let launcher = Launcher {
                token,
                generation,
                children: &children,
                exits,
                logs,
            };
            let outcome = prepare(&build, &dir, launcher, &sources).await;
            let _ = events.send(Event::Prepared {
                outcome: Box::new(outcome),
                restart: false,
            });
        }));
    }

    fn built(&mut self, outcome: Result<Serving, Failure>) {
        self.building = None;
        match outcome {
            Ok(serving) => {
                self.crashes = 0;
                self.crashed = None;
                self.swap(serving, false);
            }
            Err(failure) => {
                self.inspector.update(|state| {
                    state.failure = Some(serde_json::json!({
                        "generation": self.generation,
                        "headline": failure.headline,
                        "details": failure.details,
                    }));
                });
                let still = match &self.current {
                    Some(current) => format!("generation {} keeps serving", current.generation),
                    None => "nothing is serving yet: fix it and save".to_owned(),
                };
                report(&format!("{}; {still}", failure.headline), &failure);
                remove_generations(&self.state_dir, &self.generations_in_use());
            }
        }
        if std::mem::take(&mut self.pending) {
            eprintln!("kindgi dev: changed during the build; rebuilding…");
            self.start_build();
        }
    }

    /// Sends new calls to `serving`; the process it replaces drains.
    fn swap(&mut self, serving: Serving, restart: bool) {
        self.front.set_upstream(Some(Arc::new(Upstream {
            addr: SocketAddr::from(([127, 0, 0, 1], serving.process.port)),
            token: self.internal_token.clone(),
            index: Arc::clone(&serving.index),
            values: Arc::clone(&serving.values),
        })));
        let stable_index = self.state_dir.join("index.json");
        if let Err(e) = std::fs::copy(&serving.launch.index, &stable_index) {
            eprintln!(
                "kindgi dev: warning: cannot copy the index to {}: {e}",
                stable_index.display()
            );
        }
        self.inspector.update(|state| {
            state.index = Some(Arc::clone(&serving.index));
            state.index_path = Some(stable_index.clone());
            state.generation = Some(serving.generation);
            if !restart {
                state.failure = None;
            }
            state.defaults = inspector_defaults(&serving);
        });
        let took = serving
            .took
            .map(|t| format!("; built in {:.1} s", t.as_secs_f64()))
            .unwrap_or_default();
        eprintln!(
            "kindgi dev: generation {} is serving{} (pid {}{took})",
            serving.generation,
            if restart { " again" } else { "" },
            serving.process.pid,
        );
        if let Some(old) = self.current.replace(serving) {
            self.draining.insert(old.process.id, old.generation);
            self.children.terminate(old.process.id);
        }
        if !self.banner_shown {
            self.banner_shown = true;
            if let Some(current) = &self.current {
                say(&banner::banner(
                    &banner::Serving {
                        url: &self.url,
                        token: &self.token,
                        inspector: &self.inspector.page_url(&self.token),
                        index: &current.index,
                        index_path: &stable_index,
                    },
                    &current.values,
                    &current.launch.env,
                ));
            }
        }
        remove_generations(&self.state_dir, &self.generations_in_use());
    }

    fn generations_in_use(&self) -> Vec<u64> {
        let mut keep: Vec<u64> = self.draining.values().copied().collect();
        keep.extend(self.current.as_ref().map(|c| c.generation));
        keep.extend(self.crashed.as_ref().map(|c| c.generation));
        keep.push(self.generation);
        keep
    }

    fn on_exit(&mut self, exited: &Exited) {
        if let Some(generation) = self.draining.remove(&exited.id) {
            eprintln!(
                "kindgi dev: generation {generation} stopped after its calls finished ({})",
                exited.status
            );
            remove_generations(&self.state_dir, &self.generations_in_use());
            return;
        }
        let is_current = self
            .current
            .as_ref()
            .is_some_and(|c| c.process.id == exited.id);
        if !is_current {
            return;
        }
        self.front.set_upstream(None);
        if let Some(crashed) = self.current.take() {
            if crashed.started.elapsed() >= STABLE_FOR {
                self.crashes = 0;
            }
            eprintln!(
                "kindgi dev: generation {} (pid {}) exited on its own ({})",
                crashed.generation, crashed.process.pid, exited.status
            );
            self.crashed = Some(crashed);
        }
        self.restart();
    }

    /// Starts the crashed generation again, or gives up.
    fn restart(&mut self) {
        let Some(crashed) = &self.crashed else {
            return;
        };
        if self.crashes >= MAX_RESTARTS {
            eprintln!(
                "kindgi dev: gave up restarting generation {} after {}; nothing is serving. Fix it and save to try again.",
                crashed.generation,
                counted(MAX_RESTARTS, "restart")
            );
            return;
        }
        self.crashes += 1;
        eprintln!(
            "kindgi dev: restarting generation {} ({}/{MAX_RESTARTS})…",
            crashed.generation, self.crashes
        );
        let launch = crashed.launch.clone();
        let index = Arc::clone(&crashed.index);
        let values = Arc::clone(&crashed.values);
        let generation = crashed.generation;
        let delay = Duration::from_millis(250 * u64::from(self.crashes));
        let children = self.children.clone();
        let exits = self.exits.clone();
        let events = self.events.clone();
        tokio::spawn(async move {
            tokio::time::sleep(delay).await;
            let outcome = child::start(&launch, &children, exits)
                .await
                .map(|process| Serving {
                    generation,
                    process,
                    launch,
                    index,
                    values,
                    took: None,
                    started: Instant::now(),
                });
            let _ = events.send(Event::Prepared {
                outcome: Box::new(outcome),
                restart: true,
            });
        });
    }

    fn restarted(&mut self, outcome: Result<Serving, Failure>) {
        match outcome {
            // A new build took over meanwhile: it wins.
            Ok(serving) if self.current.is_some() || self.crashed.is_none() => {
                self.children.terminate(serving.process.id);
            }
            Ok(serving) => {
                self.crashed = None;
                self.swap(serving, true);
            }
            Err(failure) if self.crashed.is_some() => {
                report(&failure.headline, &failure);
                self.restart();
            }
            Err(_) => {}
        }
    }
}

/// Tells the watcher what a build that started at `started` was built
/// from: the pack folder's own files, each path package's, the workspace's
/// manifest and every file of the binary's dep-info. A failed build names
/// fewer files than the build before it, so those stay watched too.
fn watch_inputs(
    sources: &signal::Sender<Arc<Watched>>,
    pack_dir: &Path,
    inputs: &Inputs,
    succeeded: bool,
    started: SystemTime,
) {
    let mut next = Watched::pack(pack_dir);
    if !succeeded {
        next.extend(&sources.borrow());
    }
    for package in &inputs.packages {
        next.package(package);
    }
    for file in inputs.files.iter().chain(&inputs.workspace_manifest) {
        next.file(file.clone());
    }
    let next = next.named_at(started);
    sources.send_if_modified(|current| {
        if current.same_files(&next) {
            return false;
        }
        *current = Arc::new(next);
        true
    });
}

/// Builds, indexes and boots one generation: its process gets the
/// environment a deployed pack would have, plus the pack's `.env`; its
/// calls get the secrets and connections of `.kindgi/`. What the build
/// was built from goes to the watcher through `sources`.
async fn prepare(
    build: &BuildOptions,
    dir: &Path,
    launcher: Launcher<'_>,
    sources: &signal::Sender<Arc<Watched>>,
) -> Result<Serving, Failure> {
    let Launcher {
        token,
        generation,
        children,
        exits,
        logs,
    } = launcher;
    let local = local::load(&build.pack_dir).map_err(|e| Failure::new(e, Vec::new()))?;
    let started = SystemTime::now();
    let (inputs, built) = build::build(build).await;
    watch_inputs(sources, &build.pack_dir, &inputs, built.is_ok(), started);
    let built = built?;
    for warning in &built.warnings {
        eprintln!("{warning}");
    }
    let executable = child::keep_binary(&built.executable, dir).map_err(|e| {
        Failure::new(
            format!("cannot copy the pack binary to {}: {e}", dir.display()),
            Vec::new(),
        )
    })?;
    let index_path = dir.join("index.json");
    let index_warnings = build::index(
        &executable,
        &build.pack_dir,
        &index_path,
        &format!("dev.{generation}"),
    )
    .await?;
    for warning in &index_warnings {
        eprintln!("{warning}");
    }
    let index: PackIndex = std::fs::read(&index_path)
        .ok()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok())
        .ok_or_else(|| {
            Failure::new(
                "the pack's index command wrote no readable index",
                Vec::new(),
            )
        })?;
    for warning in local.values.app_mismatches(&index, &build.pack_dir) {
        eprintln!("{warning}");
    }
    let declared: Vec<String> = index
        .env
        .iter()
        .flat_map(|env| env.required.iter().chain(&env.optional))
        .cloned()
        .collect();
    let launch = Launch {
        executable,
        index: index_path,
        dir: build.pack_dir.clone(),
        env: env::pack_env(std::env::vars_os(), &declared, &local.dotenv),
        token,
        generation,
        logs: Some(logs),
    };
    let process = child::start(&launch, children, exits).await?;
    Ok(Serving {
        generation,
        process,
        launch,
        index: Arc::new(index),
        values: Arc::new(local.values),
        took: Some(built.took),
        started: Instant::now(),
    })
}

/// What starting one generation's process needs.
struct Launcher<'a> {
    token: String,
    generation: u64,
    children: &'a Children,
    exits: mpsc::UnboundedSender<Exited>,
    logs: Arc<crate::inspector::logs::Logs>,
}

/// The context values the inspector's page starts with: the env values
/// the tools declare that the process has, and the names of the secrets
/// and connections the front adds (never their values).
fn inspector_defaults(serving: &Serving) -> serde_json::Value {
    let mut env = serde_json::Map::new();
    for tool in &serving.index.tools {
        for (name, _) in local::declared(tool, "env") {
            let value = serving
                .launch
                .env
                .iter()
                .find(|(set, _)| set.to_str() == Some(name.as_str()))
                .and_then(|(_, value)| value.to_str());
            if let Some(value) = value {
                env.insert(name.clone(), value.into());
            }
        }
    }
    serde_json::json!({
        "env": env,
        "secrets": serving.values.secrets.keys().collect::<Vec<_>>(),
        "connections": serving.values.connections.keys().collect::<Vec<_>>(),
        "secretsFile": local::SECRETS,
        "connectionsFile": local::CONNECTIONS,
    })
}
