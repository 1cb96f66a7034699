//! `support.canned-reply`: the first answer a customer gets, by topic.

use kindgi::ToolError;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// What the customer wrote about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Topic {
    /// Invoices, charges, refunds.
    Billing,
    /// Where their parcel is.
    Shipping,
    /// Logins and settings.
    Account,
    /// Anything else.
    Other,
}

impl Topic {
    fn words(self) -> &'static str {
        match self {
            Self::Billing => "your bill",
            Self::Shipping => "your delivery",
            Self::Account => "your account",
            Self::Other => "your question",
        }
    }
}

/// Who to answer, about what.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CannedReplyInput {
    /// The customer's first name.
    #[schemars(length(min = 1))]
    pub customer_name: String,
    /// What they wrote about.
    pub topic: Topic,
}

/// The reply.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
pub struct CannedReply {
    /// The reply's text.
    pub text: String,
}

/// Writes the first reply to a customer, by topic.
#[kindgi::tool(id = "support.canned-reply", mutating = false)]
pub async fn canned_reply(input: CannedReplyInput) -> Result<CannedReply, ToolError> {
    Ok(CannedReply {
        text: format!(
            "Hi {}, thanks for reaching out about {}. A member of our team will reply within one business day.",
            input.customer_name,
            input.topic.words()
        ),
    })
}
