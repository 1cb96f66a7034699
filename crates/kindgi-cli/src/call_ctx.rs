//! What `kindgi call` puts in the call's context from its flags, as a
//! runtime sends it: `--secret NAME=VALUE` → `ctx.secrets`, `--env
//! NAME=VALUE` → `ctx.env`, `--connection NAME=APP:TOKEN` →
//! `ctx.connections`, `--settings ID=JSON` → `ctx.settings`.
//!
//! A usage error names the flag and the form it takes; it never shows what
//! was given to `--secret` or `--connection`, which may be a secret.

use std::collections::BTreeMap;

use kindgi_protocol::{CallContext, Connection, ConnectionAccount, Secret};
use serde_json::{Map, Value};

/// A connection for development, from `APP:TOKEN`: the app's id (also its
/// name) and the access token; the connection is `dev-<name>`, the account
/// `dev`.
pub(crate) fn dev_connection(name: &str, app: &str, token: &str) -> Connection {
    Connection {
        connection_id: format!("dev-{name}"),
        app: app.to_owned(),
        app_name: app.to_owned(),
        access_token: Secret::new(token),
        account: ConnectionAccount {
            id: "dev".to_owned(),
            label: "dev".to_owned(),
        },
        expires_at: None,
    }
}

/// `APP:TOKEN`, both non-empty (the token may hold `:`).
pub(crate) fn split_app_token(value: &str) -> Option<(&str, &str)> {
    value
        .split_once(':')
        .filter(|(app, token)| !app.is_empty() && !token.is_empty())
}

/// The context values of `kindgi call`'s flags, each as given (repeatable).
#[derive(Debug, Default)]
pub(crate) struct ContextFlags<'a> {
    /// `--secret NAME=VALUE`.
    pub(crate) secrets: &'a [String],
    /// `--env NAME=VALUE`.
    pub(crate) env: &'a [String],
    /// `--connection NAME=APP:TOKEN`.
    pub(crate) connections: &'a [String],
    /// `--settings ID=JSON`.
    pub(crate) settings: &'a [String],
}

/// A flag, the form its value takes, and whether a usage error may show
/// what was given.
#[derive(Clone, Copy)]
struct Flag {
    name: &'static str,
    form: &'static str,
    /// `false`: the value may be a secret.
    shown: bool,
}

const SECRET: Flag = Flag::new("--secret", "NAME=VALUE", false);
const ENV: Flag = Flag::new("--env", "NAME=VALUE", true);
const CONNECTION: Flag = Flag::new("--connection", "NAME=APP:TOKEN", false);
const SETTINGS: Flag = Flag::new("--settings", "ID=JSON with a JSON object", true);

impl Flag {
    const fn new(name: &'static str, form: &'static str, shown: bool) -> Self {
        Self { name, form, shown }
    }

    /// The usage error for `raw`.
    fn error(self, raw: &str) -> String {
        if self.shown {
            format!("{} needs {}, got {raw:?}", self.name, self.form)
        } else {
            format!("{} needs {}", self.name, self.form)
        }
    }

    /// Each `NAME=…` of `values`, its part after `=` parsed; a name given
    /// twice refused.
    fn collect<T>(
        self,
        values: &[String],
        mut parse: impl FnMut(&str, &str) -> Option<T>,
    ) -> Result<BTreeMap<String, T>, String> {
        let mut out = BTreeMap::new();
        for raw in values {
            let item = raw
                .split_once('=')
                .filter(|(name, _)| !name.trim().is_empty())
                .and_then(|(name, value)| Some((name, parse(name, value)?)));
            let Some((name, item)) = item else {
                return Err(self.error(raw));
            };
            if out.insert(name.to_owned(), item).is_some() {
                return Err(format!("{} {name} is given twice", self.name));
            }
        }
        Ok(out)
    }
}

impl ContextFlags<'_> {
    /// Puts the flags' values in `ctx`; a field no flag names stays absent.
    ///
    /// # Errors
    ///
    /// The usage error of the first flag whose value isn't of its form.
    pub(crate) fn apply(&self, ctx: &mut CallContext) -> Result<(), String> {
        let secrets = SECRET.collect(self.secrets, |_, value| {
            Some(Value::String(value.to_owned()))
        })?;
        let env = ENV.collect(self.env, |_, value| Some(value.to_owned()))?;
        let connections = CONNECTION.collect(self.connections, |name, value| {
            split_app_token(value).map(|(app, token)| dev_connection(name, app, token))
        })?;
        let settings = SETTINGS.collect(self.settings, |_, json| {
            serde_json::from_str::<Value>(json)
                .ok()
                .filter(Value::is_object)
        })?;
        if !secrets.is_empty() {
            ctx.secrets = Some(secrets.into_iter().collect::<Map<_, _>>());
        }
        if !env.is_empty() {
            ctx.env = Some(env);
        }
        if !connections.is_empty() {
            ctx.connections = Some(connections);
        }
        if !settings.is_empty() {
            ctx.settings = Some(settings.into_iter().collect::<Map<_, _>>());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn strings(values: &[&str]) -> Vec<String> {
        values.iter().map(|v| (*v).to_owned()).collect()
    }

    fn applied(flags: &ContextFlags<'_>) -> Result<Value, String> {
        let mut ctx = CallContext::default();
        flags.apply(&mut ctx)?;
        Ok(serde_json::to_value(&ctx).expect("ctx"))
    }

    #[test]
    fn each_flag_fills_its_field_as_a_runtime_sends_it() {
        let secrets = strings(&["API_KEY=sk=1"]);
        let env = strings(&["REGION=eu", "EMPTY="]);
        let connections = strings(&["crm=acme-crm:tok:en"]);
        let settings = strings(&[r#"tone={"formal":true}"#]);
        let ctx = applied(&ContextFlags {
            secrets: &secrets,
            env: &env,
            connections: &connections,
            settings: &settings,
        })
        .expect("valid flags");
        assert_eq!(ctx["secrets"], json!({"API_KEY": "sk=1"}));
        assert_eq!(ctx["env"], json!({"EMPTY": "", "REGION": "eu"}));
        assert_eq!(
            ctx["connections"],
            json!({"crm": {"connectionId": "dev-crm", "app": "acme-crm", "appName": "acme-crm",
                "accessToken": "tok:en", "account": {"id": "dev", "label": "dev"}}})
        );
        assert_eq!(ctx["settings"], json!({"tone": {"formal": true}}));
        assert_eq!(
            applied(&ContextFlags::default()).expect("none"),
            json!({"tenantId": "", "runId": ""})
        );
    }

    #[test]
    fn bad_syntax_names_the_flag_and_its_form_never_a_secret() {
        let error = |flags: ContextFlags<'_>| applied(&flags).expect_err("refused");
        let v = strings(&["sk-live-sentinel"]);
        assert_eq!(
            error(ContextFlags {
                secrets: &v,
                ..Default::default()
            }),
            "--secret needs NAME=VALUE"
        );
        let v = strings(&["=sk-live-sentinel"]);
        assert_eq!(
            error(ContextFlags {
                secrets: &v,
                ..Default::default()
            }),
            "--secret needs NAME=VALUE"
        );
        for bad in [
            "crm",
            "crm=sk-live-sentinel",
            "crm=:sk-live-sentinel",
            "crm=app:",
        ] {
            let v = strings(&[bad]);
            assert_eq!(
                error(ContextFlags {
                    connections: &v,
                    ..Default::default()
                }),
                "--connection needs NAME=APP:TOKEN",
                "{bad}"
            );
        }
        let v = strings(&["REGION"]);
        assert_eq!(
            error(ContextFlags {
                env: &v,
                ..Default::default()
            }),
            r#"--env needs NAME=VALUE, got "REGION""#
        );
        let v = strings(&["tone=[1]"]);
        assert_eq!(
            error(ContextFlags {
                settings: &v,
                ..Default::default()
            }),
            r#"--settings needs ID=JSON with a JSON object, got "tone=[1]""#
        );
        let v = strings(&["A=sk-1", "A=sk-2"]);
        assert_eq!(
            error(ContextFlags {
                secrets: &v,
                ..Default::default()
            }),
            "--secret A is given twice"
        );
    }
}
