//! Protocol 2.9: a tool reads the connections its context carries, and
//! reports a token its app refused (`connection-rejected`).

use serde_json::{Value, json};

use super::index::entry;
use super::tool;
use crate::case::{Case, Checked, Feature, ensure, eq, error_code, result, str_at};
use crate::session::{Profile, Session};

pub(crate) fn cases() -> Vec<Case> {
    use Feature::Connections;
    vec![
        Case::new(
            "connection.index-entry",
            Connections,
            "The index gives conformance.connection needsSpec.connections.crm {app: acme-crm, scopes: [contacts.read]}.",
            index_entry,
        ),
        Case::new(
            "connection.read",
            Connections,
            "With ctx.connections.crm, conformance.connection answers its id, app, appName, account and token length, never the token.",
            read,
        ),
        Case::new(
            "connection.rejected",
            Connections,
            "{reject: true}: error connection-rejected with connection \"crm\" and toolId.",
            rejected,
        ),
        Case::new(
            "connection.absent",
            Connections,
            "Without ctx.connections, conformance.connection answers handler-throw.",
            absent,
        ),
    ]
}

async fn index_entry(s: Session) -> Checked {
    let index = s.index().await?;
    let tool = entry(&index.json, "tools", "conformance.connection")?;
    eq(
        "needsSpec.connections.crm",
        Some(&json!({"app": "acme-crm", "scopes": ["contacts.read"]})),
        tool.pointer("/needsSpec/connections/crm"),
    )
}

/// A context whose `crm` connection's token is a sentinel.
fn connected(s: &Session) -> (Value, String) {
    let token = s.sentinel("access-token");
    let context = json!({
        "tenantId": "t1",
        "runId": s.unique("connection"),
        "connections": {"crm": {
            "connectionId": "conn_1",
            "app": "acme-crm",
            "appName": "Acme CRM",
            "accessToken": token,
            "account": {"id": "acct_42", "label": "ana@acme.example"},
            "expiresAt": "2030-01-01T00:00:00.000Z"
        }}
    });
    (context, token)
}

async fn call(s: &Session, input: Value, context: Value) -> Result<Value, String> {
    let service = s.service(Profile::Default).await?;
    s.invoke(&service, &tool("conformance.connection", input, context))
        .await
}

async fn read(s: Session) -> Checked {
    let (context, token) = connected(&s);
    let answer = call(&s, json!({}), context).await?;
    ensure(!answer.to_string().contains(&token), || {
        "expected the access token kept out of the answer".to_owned()
    })?;
    result(
        &answer,
        &json!({
            "connectionId": "conn_1",
            "app": "acme-crm",
            "appName": "Acme CRM",
            "accountId": "acct_42",
            "accountLabel": "ana@acme.example",
            "tokenLength": token.len()
        }),
    )
}

async fn rejected(s: Session) -> Checked {
    let (context, _) = connected(&s);
    let answer = call(&s, json!({"reject": true}), context).await?;
    error_code(&answer, "connection-rejected")?;
    eq("connection", "crm", str_at(&answer, "/connection")?)?;
    eq(
        "toolId",
        "conformance.connection",
        str_at(&answer, "/toolId")?,
    )
}

async fn absent(s: Session) -> Checked {
    let answer = call(&s, json!({}), super::ctx(&s.unique("connection"))).await?;
    error_code(&answer, "handler-throw")?;
    eq(
        "toolId",
        "conformance.connection",
        str_at(&answer, "/toolId")?,
    )
}
