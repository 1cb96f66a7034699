//! The bench pack (pack `bench` 1.0.0): one tool, `bench.bulk`, for the
//! benchmark's 1 MiB validation scenario. The fixture pack can't change, so
//! the scenario's schema lives here; `bench/python-pack/tools/bulk.py`
//! declares the same schema in Python.
//!
//! The input is a batch of orders: a few hundred objects of nine fields,
//! each with up to 64 lines of three. Every field carries a keyword
//! (`minLength`, `maximum`, `enum`, `maxItems`, …), and unknown fields are
//! refused, so the service checks every value of the megabyte.

use std::process::ExitCode;

use kindgi::{Pack, Tool, ToolContext, ToolError};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// One line of an order.
#[derive(Debug, Deserialize, JsonSchema)]
#[expect(dead_code, reason = "read by validation and deserialization only")]
#[serde(rename_all = "camelCase")]
struct Line {
    #[schemars(length(min = 1, max = 32))]
    sku: String,
    #[schemars(range(min = 1, max = 10_000))]
    quantity: i64,
    #[schemars(range(min = 0))]
    unit_price: f64,
}

/// Where an order is.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Status {
    Open,
    Paid,
    Shipped,
    Cancelled,
}

/// One order.
#[derive(Debug, Deserialize, JsonSchema)]
#[expect(dead_code, reason = "read by validation and deserialization only")]
struct Order {
    #[schemars(length(min = 1, max = 64))]
    id: String,
    #[schemars(length(min = 1))]
    customer: String,
    status: Status,
    #[schemars(range(min = 0, max = 9))]
    priority: i64,
    paid: bool,
    #[schemars(range(min = 0))]
    total: f64,
    #[schemars(length(max = 16))]
    tags: Vec<String>,
    #[schemars(length(min = 1, max = 64))]
    lines: Vec<Line>,
    note: String,
}

/// A batch of orders.
#[derive(Debug, Deserialize, JsonSchema)]
struct BulkInput {
    #[schemars(length(min = 1))]
    orders: Vec<Order>,
}

/// What the batch held.
#[derive(Debug, Serialize, JsonSchema)]
struct BulkOutput {
    orders: u64,
    lines: u64,
    quantity: i64,
}

/// Counts the orders, lines and items of a batch.
async fn bulk(input: BulkInput, _ctx: ToolContext) -> Result<BulkOutput, ToolError> {
    let lines = input.orders.iter().map(|o| o.lines.len() as u64).sum();
    let quantity = input
        .orders
        .iter()
        .flat_map(|o| o.lines.iter())
        .map(|l| l.quantity)
        .sum();
    Ok(BulkOutput {
        orders: input.orders.len() as u64,
        lines,
        quantity,
    })
}

/// The same allocator as the fixture pack's, so the two measure alike.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    Pack::new()
        .tool(
            Tool::new("bench.bulk")
                .description("Counts the orders, lines and items of a batch.")
                .version("1.0.0")
                .mutating(false)
                .handler(bulk),
        )
        .run()
}
