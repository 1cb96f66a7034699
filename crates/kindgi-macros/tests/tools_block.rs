//! `#[kindgi_macros::tools]` on an `impl` block: tools that share one
//! value, called as the service calls them.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use kindgi::testing::{TestContext, TestPack};
use kindgi::{Pack, ToolContext, ToolError};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

#[derive(Deserialize, JsonSchema)]
struct Add {
    by: u64,
}

#[derive(Serialize, JsonSchema)]
struct Total {
    total: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    tenant: Option<String>,
}

/// A counter every tool of the pack shares.
#[derive(Default)]
struct Counter {
    total: AtomicU64,
    log: Mutex<Vec<String>>,
}

const READ_DESCRIPTION: &str = "Reads the total.";

#[kindgi_macros::tools]
impl Counter {
    /// Adds to the shared total.
    #[tool(id = "count.add")]
    async fn add(&self, input: Add) -> Result<Total, ToolError> {
        let total = self.total.fetch_add(input.by, Ordering::SeqCst) + input.by;
        Ok(Total {
            total,
            tenant: None,
        })
    }

    /// Adds to the shared total on the blocking pool, noting the tenant.
    #[tool(id = "count.add-blocking", blocking)]
    fn add_blocking(&self, input: Add, ctx: ToolContext) -> Result<Total, ToolError> {
        let total = self.total.fetch_add(input.by, Ordering::SeqCst) + input.by;
        if let Ok(mut log) = self.log.lock() {
            log.push(ctx.tenant_id().to_owned());
        }
        Ok(Total {
            total,
            tenant: Some(ctx.tenant_id().to_owned()),
        })
    }

    #[tool(id = "count.read", description = READ_DESCRIPTION, mutating = false)]
    async fn read(
        &self,
        _input: serde_json::Map<String, serde_json::Value>,
        ctx: ToolContext,
    ) -> Result<Total, ToolError> {
        Ok(Total {
            total: self.total.load(Ordering::SeqCst),
            tenant: Some(ctx.tenant_id().to_owned()),
        })
    }

    /// Not a tool: stays an ordinary method.
    fn double(&self) -> u64 {
        self.total.load(Ordering::SeqCst) * 2
    }
}

#[tokio::test]
async fn the_tools_share_one_value() {
    let tools = Counter::default().tools();
    let ids: Vec<&str> = tools.iter().map(|t| t.id()).collect();
    assert_eq!(ids, ["count.add", "count.add-blocking", "count.read"]);
    let pack = TestPack::new(Pack::new().with_tools(tools)).expect("a valid pack");
    let ctx = || TestContext::new().tenant("acme");
    let one = pack.call("count.add", json!({"by": 2}), ctx()).await;
    assert_eq!(one.output().expect("a result"), json!({"total": 2}));
    let two = pack
        .call("count.add-blocking", json!({"by": 3}), ctx())
        .await;
    assert_eq!(
        two.output().expect("a result"),
        json!({"total": 5, "tenant": "acme"})
    );
    let read = pack.call("count.read", json!({}), ctx()).await;
    assert_eq!(
        read.output().expect("a result"),
        json!({"total": 5, "tenant": "acme"})
    );
}

#[test]
fn descriptions_come_from_doc_comments_or_an_expression() {
    let counter = std::sync::Arc::new(Counter::default());
    let read = counter.read_tool();
    let add = counter.add_tool();
    let index = kindgi::index::build_index(
        &Pack::new().tool(add).tool(read),
        &kindgi::index::PackConfig {
            id: "count".to_owned(),
            version: "1.0.0".to_owned(),
            env: None,
        },
        &kindgi::index::Pins {
            artifact_version: "1".to_owned(),
            published_at: "2026-01-01T00:00:00.000Z".to_owned(),
        },
    )
    .expect("an index");
    assert_eq!(
        index.tools[0].description.as_deref(),
        Some("Adds to the shared total.")
    );
    assert_eq!(
        index.tools[1].description.as_deref(),
        Some(READ_DESCRIPTION)
    );
    assert_eq!(index.tools[1].mutating, Some(false));
    assert_eq!(index.tools[0].module_path, "tests/tools_block.rs");
    assert_eq!(counter.double(), 0);
    // The output schema says what serde writes: `tenant` may be left out.
    assert_eq!(index.tools[0].output["required"], json!(["total"]));
}
