//! `support.refund-quote`: how much to refund for some lines of an order.

use kindgi::ToolError;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A line of the order to refund.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RefundLine {
    /// The product's SKU.
    #[schemars(length(min = 1))]
    pub sku: String,
    /// How many came back.
    #[schemars(range(min = 1))]
    pub quantity: u32,
    /// What one cost, in cents.
    pub unit_cents: u32,
}

/// What to quote a refund for.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct QuoteRequest {
    /// The ticket it is for.
    #[schemars(length(min = 1))]
    pub ticket_id: String,
    /// The lines to refund, at least one.
    #[schemars(length(min = 1))]
    pub lines: Vec<RefundLine>,
    /// Shipping to refund too, in cents.
    #[serde(default)]
    pub shipping_cents: u32,
}

/// The quote.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RefundQuote {
    /// The ticket it is for.
    pub ticket_id: String,
    /// What to refund, in cents: every line's quantity times its unit
    /// price, and the shipping.
    pub total_cents: u64,
    /// The SKUs refunded, in the order given.
    pub skus: Vec<String>,
}

/// Quotes a refund: the lines' quantities times their unit prices, plus
/// the shipping.
#[kindgi::tool(id = "support.refund-quote", mutating = false)]
pub async fn refund_quote(input: QuoteRequest) -> Result<RefundQuote, ToolError> {
    let total_cents = input
        .lines
        .iter()
        .try_fold(u64::from(input.shipping_cents), |sum, l| {
            sum.checked_add(u64::from(l.quantity) * u64::from(l.unit_cents))
        })
        .ok_or_else(|| ToolError::new("QuoteTooLarge", "the refund's total passes 2^64 cents"))?;
    Ok(RefundQuote {
        ticket_id: input.ticket_id,
        total_cents,
        skus: input.lines.into_iter().map(|l| l.sku).collect(),
    })
}
