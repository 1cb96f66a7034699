//! One run of the suite against one target: its work folder, its index,
//! the services its cases share, the sentinels they send, the dev runtime
//! the files cases use.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use kindgi_runtime::{DevRuntime, RuntimeConfig};
use serde_json::Value;
use tokio::sync::{OnceCell, oneshot};

use crate::harness::{Output, Pins, Process, Service, StartOptions, Target};
use crate::http::{HttpRequest, HttpResponse, Transport};
use crate::json::canonical_pretty;
use crate::schema::Schemas;

/// How long a service may take to exit after SIGTERM before it is killed.
const STOP_GRACE: Duration = Duration::from_secs(10);

/// The services cases share, each started once, on first use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Profile {
    /// The index as written, default settings, a few probe variables
    /// (one the env filter must drop, holding a sentinel).
    Default,
    /// An index that requires `NEEDED_VAR`, which is unset; strict check.
    EnvStrict,
    /// The same index, with `OPTIONAL_VAR` declared and set; warn check.
    EnvWarn,
    /// `KINDGI_PACK_ENV_FILTER=off`, with the secret probe set.
    FilterOff,
    /// `KINDGI_PACK_TENANT_ID=t1`.
    Tenant,
}

/// The index the suite wrote with the fixed pins.
#[derive(Debug)]
pub(crate) struct Indexed {
    pub(crate) path: PathBuf,
    pub(crate) bytes: Vec<u8>,
    pub(crate) json: Value,
}

/// The dev runtime the files cases get their tool-files grants from.
#[derive(Debug)]
pub(crate) struct FilesRuntime {
    pub(crate) runtime: DevRuntime,
    stop: Mutex<Option<oneshot::Sender<()>>>,
}

type Shared = Arc<OnceCell<Result<Arc<Service>, String>>>;

#[derive(Debug)]
struct Inner {
    target: Target,
    transport: Transport,
    work: tempfile::TempDir,
    schemas: Result<Schemas, String>,
    index: OnceCell<Result<Arc<Indexed>, String>>,
    services: Mutex<HashMap<Profile, Shared>>,
    profile_indexes: Mutex<HashMap<Profile, PathBuf>>,
    outputs: Mutex<Vec<Arc<Output>>>,
    sentinels: Mutex<Vec<String>>,
    counter: AtomicUsize,
    files: OnceCell<Result<Arc<FilesRuntime>, String>>,
}

/// One run of the suite. Cheap to clone.
#[derive(Debug, Clone)]
pub(crate) struct Session(Arc<Inner>);

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Session {
    pub(crate) fn new(target: Target, transport: Transport) -> Result<Self, String> {
        let work = tempfile::Builder::new()
            .prefix("kindgi-conformance-")
            .tempdir()
            .map_err(|e| format!("cannot make a work folder: {e}"))?;
        Ok(Self(Arc::new(Inner {
            target,
            transport,
            work,
            schemas: Schemas::load(),
            index: OnceCell::new(),
            services: Mutex::new(HashMap::new()),
            profile_indexes: Mutex::new(HashMap::new()),
            outputs: Mutex::new(Vec::new()),
            sentinels: Mutex::new(Vec::new()),
            counter: AtomicUsize::new(0),
            files: OnceCell::new(),
        })))
    }

    pub(crate) fn target(&self) -> &Target {
        &self.0.target
    }

    /// The HTTP this run speaks to every service.
    pub(crate) fn transport(&self) -> Transport {
        self.0.transport
    }

    pub(crate) fn schemas(&self) -> Result<&Schemas, String> {
        self.0.schemas.as_ref().map_err(Clone::clone)
    }

    /// A path in the work folder, made unique with a counter.
    pub(crate) fn path(&self, name: &str) -> PathBuf {
        self.0.work.path().join(format!("{}-{name}", self.next()))
    }

    fn next(&self) -> usize {
        self.0.counter.fetch_add(1, Ordering::SeqCst)
    }

    /// An id no other call of this run uses: `<prefix>-<n>-<random>`.
    pub(crate) fn unique(&self, prefix: &str) -> String {
        format!(
            "{prefix}-{}-{}",
            self.next(),
            hex::encode(rand::random::<[u8; 4]>())
        )
    }

    /// A fresh sentinel: a unique string that must never appear in a
    /// service's output.
    pub(crate) fn sentinel(&self, label: &str) -> String {
        let value = format!(
            "sentinel-{label}-{}",
            hex::encode(rand::random::<[u8; 12]>())
        );
        self.add_sentinel(&value);
        value
    }

    pub(crate) fn add_sentinel(&self, value: &str) {
        lock(&self.0.sentinels).push(value.to_owned());
    }

    pub(crate) fn sentinels(&self) -> Vec<String> {
        lock(&self.0.sentinels).clone()
    }

    /// The output of every service this run started.
    pub(crate) fn outputs(&self) -> Vec<Arc<Output>> {
        lock(&self.0.outputs).clone()
    }

    /// The index written with the fixed pins (once per run).
    pub(crate) async fn index(&self) -> Result<Arc<Indexed>, String> {
        self.0
            .index
            .get_or_init(|| async {
                let path = self.0.work.path().join("index.json");
                self.target()
                    .index(&path, &Pins::default())
                    .await
                    .map_err(|e| e.to_string())?;
                let bytes = std::fs::read(&path)
                    .map_err(|e| format!("cannot read the index {}: {e}", path.display()))?;
                let json = serde_json::from_slice(&bytes)
                    .map_err(|e| format!("the index isn't JSON: {e}"))?;
                Ok(Arc::new(Indexed { path, bytes, json }))
            })
            .await
            .clone()
    }

    /// Writes a copy of the index changed by `edit`; returns its path.
    pub(crate) async fn index_variant(
        &self,
        name: &str,
        edit: impl FnOnce(&mut Value),
    ) -> Result<PathBuf, String> {
        let mut json = self.index().await?.json.clone();
        edit(&mut json);
        let path = self.path(name);
        std::fs::write(&path, canonical_pretty(&json))
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        Ok(path)
    }

    /// Registers a process's output and token with the sentinel sweep.
    fn track(&self, options: &StartOptions, process: &Process) {
        lock(&self.0.outputs).push(Arc::clone(process.output()));
        if let Some(token) = options
            .token_value()
            .map(str::trim)
            .filter(|t| t.len() >= 8)
        {
            self.add_sentinel(token);
        }
    }

    /// Starts a service of its own for one case.
    pub(crate) async fn start(&self, options: &StartOptions) -> Result<Service, String> {
        let service = self
            .target()
            .start(options)
            .await
            .map_err(|e| e.to_string());
        if let Ok(service) = &service {
            self.track(options, service);
        }
        service
    }

    /// Starts a service that should fail to boot, and waits for it to exit:
    /// its exit code, and what it wrote.
    pub(crate) async fn run_to_exit(
        &self,
        options: &StartOptions,
        timeout: Duration,
    ) -> Result<(Option<i32>, Arc<Output>), String> {
        let process = self.target().spawn(options).map_err(|e| e.to_string())?;
        self.track(options, &process);
        let Some(code) = process.wait_exit(timeout).await else {
            process.stop(Duration::from_millis(500)).await;
            return Err(format!(
                "expected the service to exit, but it ran for {} s; stderr: {}",
                timeout.as_secs(),
                crate::http::shorten(&process.output().stderr_lines().join("\n"), 1000)
            ));
        };
        // Let the readers take the last lines.
        let output = Arc::clone(process.output());
        for _ in 0..50 {
            if output.ended() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        Ok((code, output))
    }

    /// The shared service of `profile`, started on first use.
    pub(crate) async fn service(&self, profile: Profile) -> Result<Arc<Service>, String> {
        let cell = Arc::clone(lock(&self.0.services).entry(profile).or_default());
        cell.get_or_init(|| async {
            let options = self.profile_options(profile).await?;
            let service = self
                .start(&options)
                .await
                .map_err(|e| format!("the {profile:?} service: {e}"))?;
            Ok(Arc::new(service))
        })
        .await
        .clone()
    }

    /// The index file the shared service of `profile` serves, once started.
    pub(crate) fn profile_index(&self, profile: Profile) -> Option<PathBuf> {
        lock(&self.0.profile_indexes).get(&profile).cloned()
    }

    async fn profile_options(&self, profile: Profile) -> Result<StartOptions, String> {
        let options = self.profile_start_options(profile).await?;
        lock(&self.0.profile_indexes).insert(profile, options.index_path().to_path_buf());
        Ok(options)
    }

    async fn profile_start_options(&self, profile: Profile) -> Result<StartOptions, String> {
        let index = self.index().await?.path.clone();
        Ok(match profile {
            Profile::Default => StartOptions::new(index)
                .env("AWS_SECRET_ACCESS_KEY", &self.sentinel("aws-secret"))
                .env("CONFORMANCE_DROPPED_PROBE", "dropped")
                .env("KINDGI_CONFORMANCE_PROBE", "kept")
                .env("OTEL_CONFORMANCE_PROBE", "kept"),
            Profile::EnvStrict => {
                let index = self
                    .index_variant("index-env-strict.json", |json| {
                        json["env"] =
                            serde_json::json!({"required": ["NEEDED_VAR"], "optional": []});
                    })
                    .await?;
                StartOptions::new(index).remove_env("NEEDED_VAR")
            }
            Profile::EnvWarn => {
                let index = self
                    .index_variant("index-env-warn.json", |json| {
                        json["env"] = serde_json::json!({"required": ["NEEDED_VAR"], "optional": ["OPTIONAL_VAR"]});
                    })
                    .await?;
                StartOptions::new(index)
                    .remove_env("NEEDED_VAR")
                    .env("KINDGI_PACK_ENV_CHECK", "warn")
                    .env("OPTIONAL_VAR", "declared")
            }
            Profile::FilterOff => StartOptions::new(index)
                .env("KINDGI_PACK_ENV_FILTER", "off")
                .env(
                    "AWS_SECRET_ACCESS_KEY",
                    &self.sentinel("aws-secret-unfiltered"),
                ),
            Profile::Tenant => StartOptions::new(index).env("KINDGI_PACK_TENANT_ID", "t1"),
        })
    }

    /// Sends `request` to `service` over this run's transport. A 200 from
    /// `/v1/invoke` or `/v1/info` must be JSON valid against the patched
    /// protocol schema; when it isn't, that is the difference.
    pub(crate) async fn send(
        &self,
        service: &Service,
        request: HttpRequest,
    ) -> Result<HttpResponse, String> {
        let path = request.path().to_owned();
        let response = self.transport().send(service.addr(), &request).await?;
        if response.status == 200 {
            match path.as_str() {
                "/v1/invoke" => self.schemas()?.check_response(&response.json()?)?,
                "/v1/info" => self.schemas()?.check_info(&response.json()?)?,
                _ => {}
            }
        }
        Ok(response)
    }

    /// Posts `message` to `/v1/invoke` with the service's token and
    /// `headers`; expects a 200 and returns its (schema-checked) JSON.
    pub(crate) async fn invoke_with(
        &self,
        service: &Service,
        message: &Value,
        headers: &[(&str, &str)],
    ) -> Result<Value, String> {
        let mut request = service.authed(HttpRequest::post("/v1/invoke").json(message));
        for (name, value) in headers {
            request = request.header(name, value);
        }
        let response = self.send(service, request).await?;
        response.expect_status(200)?;
        response.json()
    }

    /// [`Session::invoke_with`] without extra headers.
    pub(crate) async fn invoke(&self, service: &Service, message: &Value) -> Result<Value, String> {
        self.invoke_with(service, message, &[]).await
    }

    /// `GET /v1/info` with the token; expects 200 and returns its JSON.
    pub(crate) async fn info(&self, service: &Service) -> Result<Value, String> {
        let response = self
            .send(service, service.authed(HttpRequest::get("/v1/info")))
            .await?;
        response.expect_status(200)?;
        response.json()
    }

    /// The dev runtime, served in process on a free port (once per run).
    pub(crate) async fn files_runtime(&self) -> Result<Arc<FilesRuntime>, String> {
        self.0
            .files
            .get_or_init(|| async {
                let config = RuntimeConfig::new(self.0.work.path().join("runtime"));
                let runtime = DevRuntime::open(config)
                    .map_err(|e| format!("cannot open the dev runtime: {e}"))?;
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
                    .await
                    .map_err(|e| format!("cannot bind the dev runtime: {e}"))?;
                let (stop, stopped) = oneshot::channel::<()>();
                let serving = runtime.clone().serve(listener, async {
                    let _ = stopped.await;
                });
                tokio::spawn(serving);
                Ok(Arc::new(FilesRuntime {
                    runtime,
                    stop: Mutex::new(Some(stop)),
                }))
            })
            .await
            .clone()
    }

    /// Stops every shared service and the dev runtime.
    pub(crate) async fn shutdown(&self) {
        let shared: Vec<Shared> = lock(&self.0.services).values().cloned().collect();
        let stops = shared.iter().filter_map(|cell| match cell.get() {
            Some(Ok(service)) => Some(Arc::clone(service)),
            _ => None,
        });
        futures::future::join_all(
            stops.map(|service| async move { service.stop(STOP_GRACE).await }),
        )
        .await;
        if let Some(Ok(files)) = self.0.files.get()
            && let Some(stop) = lock(&files.stop).take()
        {
            let _ = stop.send(());
        }
    }
}
