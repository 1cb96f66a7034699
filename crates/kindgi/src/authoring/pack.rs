//! The pack: every primitive of one binary, and its `index` / `serve` entry.

use std::process::ExitCode;

use crate::{Agent, Flow, Guardrail, Tool};

/// A pack: the tools, guardrails, agents and flows one binary carries.
///
/// A pack's `main` builds it and hands over to [`Pack::run`], which reads
/// the command line: `index` writes the pack index, `serve` runs the pack
/// service.
///
/// ```no_run
/// use std::process::ExitCode;
///
/// fn main() -> ExitCode {
///     kindgi::Pack::new()
///         // .tool(tools::echo_tool())
///         // .guardrail(guardrails::min_length_guardrail())
///         .run()
/// }
/// ```
///
/// `main` must not start an async runtime itself (no `#[tokio::main]`):
/// `serve` first removes the service token and undeclared variables from
/// the process environment, which is only sound while no other thread runs.
#[derive(Debug, Clone, Default)]
#[must_use = "a builder does nothing until it is used"]
pub struct Pack {
    pub(crate) tools: Vec<Tool>,
    pub(crate) guardrails: Vec<Guardrail>,
    pub(crate) agents: Vec<Agent>,
    pub(crate) flows: Vec<Flow>,
}

impl Pack {
    /// An empty pack.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a tool.
    pub fn tool(mut self, tool: Tool) -> Self {
        self.tools.push(tool);
        self
    }

    /// Adds several tools, e.g. those of a [`tools`](crate::tools) block.
    pub fn with_tools(mut self, tools: impl IntoIterator<Item = Tool>) -> Self {
        self.tools.extend(tools);
        self
    }

    /// Adds a guardrail.
    pub fn guardrail(mut self, guardrail: Guardrail) -> Self {
        self.guardrails.push(guardrail);
        self
    }

    /// Adds an agent.
    pub fn agent(mut self, agent: Agent) -> Self {
        self.agents.push(agent);
        self
    }

    /// Adds a flow.
    pub fn flow(mut self, flow: Flow) -> Self {
        self.flows.push(flow);
        self
    }

    /// The pack's tools.
    pub fn tools(&self) -> &[Tool] {
        &self.tools
    }

    /// The pack's guardrails.
    pub fn guardrails(&self) -> &[Guardrail] {
        &self.guardrails
    }

    /// Runs the command the process was started with:
    /// `index --pack-dir D [--output P] [--artifact-version V]
    /// [--published-at T] [--json]` or `serve [--index P] [--module-root D]
    /// [--host H]`, or `healthcheck [--host H]` (a container's
    /// `HEALTHCHECK`: exit 0 when the service on `PORT` answers `/healthz`).
    ///
    /// `serve` reads its [`ServiceConfig`](crate::ServiceConfig) from its
    /// arguments and the `KINDGI_PACK_*` variables, listens on `--host` and
    /// `PORT`, and serves as [`crate::serve`] does until SIGTERM — after the
    /// changes to the whole process that only `main` may make: the token and
    /// undeclared variables removed from the environment, the open-files
    /// limit raised, a panic hook, its own async runtime.
    pub fn run(self) -> ExitCode {
        let args: Vec<String> = std::env::args().skip(1).collect();
        match args.first().map(String::as_str) {
            Some("index") => crate::index::command::run(&self, &args[1..]),
            Some("serve") => crate::service::run(self, &args[1..]),
            Some("healthcheck") => crate::service::healthcheck(&args[1..]),
            Some("-h" | "--help" | "help") => {
                println!("{USAGE}");
                ExitCode::SUCCESS
            }
            _ => {
                eprintln!("{USAGE}");
                ExitCode::from(2)
            }
        }
    }
}

const USAGE: &str = "\
usage: <pack> index [--pack-dir D] [--output P] [--artifact-version V] [--published-at T] [--json]
       <pack> serve [--index P] [--module-root D] [--host H]
       <pack> healthcheck [--host H]

index        writes the pack index (default: <pack-dir>/index.json)
serve        runs the pack service (pack protocol v2)
healthcheck  exits 0 if the service on PORT answers GET /healthz (for HEALTHCHECK)";
