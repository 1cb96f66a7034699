//! The pack folder's local values for development, in dotenv syntax
//! (`NAME=VALUE` a line, `#` comments, quotes, `export`):
//!
//! - `.env`: variables of the pack process's environment;
//! - `.kindgi/secrets.env`: secrets, `NAME=VALUE`;
//! - `.kindgi/connections.env`: connections, `NAME=APP:TOKEN` (the tool's
//!   name for the connection, the app's id, the access token).
//!
//! The front adds the secrets and connections a tool declares in its
//! `needsSpec` to each call of it that doesn't carry them, as a runtime
//! resolves them. A missing file is no values; a malformed line is an error
//! naming the file and the line, never its value.

use std::collections::BTreeMap;
use std::path::Path;

use kindgi_protocol::{PackIndex, Secret, ToolEntry};
use serde_json::{Map, Value};

use crate::call_ctx::{dev_connection, split_app_token};

/// The pack process's variables, relative to the pack folder.
pub(crate) const DOTENV: &str = ".env";
/// The secrets of dev calls, relative to the pack folder.
pub(crate) const SECRETS: &str = ".kindgi/secrets.env";
/// The connections of dev calls, relative to the pack folder.
pub(crate) const CONNECTIONS: &str = ".kindgi/connections.env";

/// Everything the three files say.
#[derive(Debug, Clone, Default)]
pub(crate) struct Local {
    /// `.env`, in the file's order.
    pub(crate) dotenv: Vec<(String, String)>,
    /// What goes into calls' contexts.
    pub(crate) values: CallValues,
}

/// The secrets and connections dev calls get.
#[derive(Debug, Clone, Default)]
pub(crate) struct CallValues {
    /// By name.
    pub(crate) secrets: BTreeMap<String, Secret>,
    /// By the tool's name for the connection: its app and token.
    pub(crate) connections: BTreeMap<String, (String, Secret)>,
}

/// Reads the pack folder's three files; a missing one holds nothing.
///
/// # Errors
///
/// A file that can't be read, or its first malformed line, in words.
pub(crate) fn load(pack_dir: &Path) -> Result<Local, String> {
    let dotenv = read(pack_dir, DOTENV, "NAME=VALUE", |_| true)?;
    let secrets = read(pack_dir, SECRETS, "NAME=VALUE", |_| true)?
        .into_iter()
        .map(|(name, value)| (name, Secret::new(value)))
        .collect();
    let connections = read(pack_dir, CONNECTIONS, "NAME=APP:TOKEN", |value| {
        split_app_token(value).is_some()
    })?
    .into_iter()
    .filter_map(|(name, value)| {
        let (app, token) = split_app_token(&value)?;
        Some((name, (app.to_owned(), Secret::new(token))))
    })
    .collect();
    Ok(Local {
        dotenv,
        values: CallValues {
            secrets,
            connections,
        },
    })
}

/// The `NAME=VALUE` pairs of `pack_dir/file`, each value checked by
/// `valid`; later lines win.
fn read(
    pack_dir: &Path,
    file: &str,
    form: &str,
    valid: impl Fn(&str) -> bool,
) -> Result<Vec<(String, String)>, String> {
    let path = pack_dir.join(file);
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(format!("Cannot read {}: {e}", path.display())),
    };
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    let lines: Vec<&str> = text.lines().collect();
    let malformed = |line: Option<usize>| match line {
        Some(line) => format!("{} line {}: expected {form}", path.display(), line + 1),
        None => format!("{}: a line is not {form}", path.display()),
    };
    let mut pairs: Vec<(String, String)> = Vec::new();
    // Where the next entry starts looking for its line.
    let mut from = 0;
    for item in dotenvy::from_read_iter(text.as_bytes()) {
        match item {
            Ok((name, value)) => {
                let line = find(&lines, from, |l| defines(l, &name));
                if !valid(&value) {
                    return Err(malformed(line));
                }
                from = line.map_or(from, |l| l + 1);
                pairs.retain(|(set, _)| *set != name);
                pairs.push((name, value));
            }
            // The parser's text of the line would show its value: only
            // the line's number is kept from it.
            Err(dotenvy::Error::LineParse(entry, _)) => {
                let first = entry.lines().next().unwrap_or_default().trim().to_owned();
                let line = find(&lines, from, |l| {
                    !first.is_empty() && l.trim_start().starts_with(&first)
                });
                return Err(malformed(line));
            }
            Err(e) => return Err(format!("Cannot read {}: {e}", path.display())),
        }
    }
    Ok(pairs)
}

/// The first line at or after `from` that `matches`.
fn find(lines: &[&str], from: usize, matches: impl Fn(&str) -> bool) -> Option<usize> {
    (from..lines.len()).find(|&i| matches(lines[i]))
}

/// Whether `line` sets `name` (`NAME=`, `export NAME =`, …).
fn defines(line: &str, name: &str) -> bool {
    let line = line.trim_start();
    let line = line.strip_prefix("export ").unwrap_or(line).trim_start();
    line.strip_prefix(name)
        .is_some_and(|rest| rest.trim_start().starts_with('='))
}

/// What `entry` declares in one `needsSpec` group (`env`, `secrets`,
/// `connections`): each name and its spec.
pub(crate) fn declared<'a>(
    entry: &'a ToolEntry,
    group: &str,
) -> impl Iterator<Item = (&'a String, &'a Value)> {
    entry
        .needs_spec
        .as_ref()
        .and_then(|needs| needs.get(group))
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
}

impl CallValues {
    /// The configured connection a tool names `name` and declares with
    /// `spec`: only one for the app it declares.
    fn connection_for(&self, name: &str, spec: &Value) -> Option<&(String, Secret)> {
        self.connections
            .get(name)
            .filter(|(app, _)| spec["app"].as_str().is_none_or(|wanted| wanted == app))
    }

    /// Adds to an invoke's `ctx` what a runtime would resolve for it and
    /// the call doesn't carry: the secrets and connections its tool
    /// declares (`needsSpec.secrets`, `needsSpec.connections`) that are
    /// configured here, and the defaults of the env values it declares
    /// (`needsSpec.env`), as a runtime sends a name no scope sets. Whether
    /// it added any.
    pub(crate) fn add_to(&self, message: &mut Value, entry: &ToolEntry) -> bool {
        let Some(ctx) = message.get_mut("ctx").and_then(Value::as_object_mut) else {
            return false;
        };
        let mut added = false;
        for (name, default) in entry.env_defaults() {
            added |= add(ctx, "env", name, || Value::from(default));
        }
        for (name, _) in declared(entry, "secrets") {
            if let Some(secret) = self.secrets.get(name) {
                added |= add(ctx, "secrets", name, || Value::from(secret.expose()));
            }
        }
        for (name, spec) in declared(entry, "connections") {
            if let Some((app, token)) = self.connection_for(name, spec) {
                added |= add(ctx, "connections", name, || {
                    serde_json::to_value(dev_connection(name, app, token.expose()))
                        .unwrap_or(Value::Null)
                });
            }
        }
        added
    }

    /// Whether a call of `entry` gets every secret and connection it declares.
    pub(crate) fn covers(&self, entry: &ToolEntry) -> bool {
        declared(entry, "secrets").all(|(name, _)| self.secrets.contains_key(name))
            && declared(entry, "connections")
                .all(|(name, spec)| self.connection_for(name, spec).is_some())
    }

    /// A warning for each configured connection some tool declares for
    /// another app: its calls don't get it.
    pub(crate) fn app_mismatches(&self, index: &PackIndex, pack_dir: &Path) -> Vec<String> {
        let mut warnings = Vec::new();
        for tool in &index.tools {
            for (name, spec) in declared(tool, "connections") {
                let (Some((app, _)), Some(wanted)) =
                    (self.connections.get(name), spec["app"].as_str())
                else {
                    continue;
                };
                if wanted != app {
                    warnings.push(format!(
                        "kindgi dev: warning: {} gives {name} for app {app}, but tool {} declares {name} for app {wanted}: its calls don't get it",
                        pack_dir.join(CONNECTIONS).display(),
                        tool.id
                    ));
                }
            }
        }
        warnings
    }
}

/// Sets `ctx[group][name]` unless the call carries it; whether it did.
fn add(
    ctx: &mut Map<String, Value>,
    group: &str,
    name: &str,
    value: impl FnOnce() -> Value,
) -> bool {
    let slot = ctx
        .entry(group)
        .or_insert_with(|| Value::Object(Map::new()));
    // A malformed field stays as sent: the service answers for it.
    match slot.as_object_mut() {
        Some(map) if !map.contains_key(name) => {
            map.insert(name.to_owned(), value());
            true
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pack_with(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().expect("dir");
        std::fs::create_dir_all(dir.path().join(".kindgi")).expect("mkdir");
        for (name, text) in files {
            std::fs::write(dir.path().join(name), text).expect("write");
        }
        dir
    }

    #[test]
    fn reads_the_three_files() {
        let dir = pack_with(&[
            (DOTENV, "# local\nREGION=eu\nexport QUOTED=\"a b\"\n"),
            (SECRETS, "API_KEY=sk-1\nAPI_KEY='sk-2'\n"),
            (CONNECTIONS, "crm = acme-crm:tok:en\n"),
        ]);
        let local = load(dir.path()).expect("valid files");
        assert_eq!(
            local.dotenv,
            [
                ("REGION".to_owned(), "eu".to_owned()),
                ("QUOTED".to_owned(), "a b".to_owned())
            ]
        );
        assert_eq!(local.values.secrets["API_KEY"].expose(), "sk-2");
        let (app, token) = &local.values.connections["crm"];
        assert_eq!((app.as_str(), token.expose()), ("acme-crm", "tok:en"));
        let empty = tempfile::tempdir().expect("dir");
        assert!(load(empty.path()).expect("no files").dotenv.is_empty());
    }

    #[test]
    fn a_malformed_line_names_the_file_and_line_never_the_value() {
        for (file, text, line, form) in [
            (
                SECRETS,
                "# secrets\nGOOD=1\n\nsk-live-sentinel\n",
                4,
                "NAME=VALUE",
            ),
            (SECRETS, "A=1\nB=\"sk-live-sentinel\n", 2, "NAME=VALUE"),
            (
                CONNECTIONS,
                "crm=acme:ok\nhelpdesk=sk-live-sentinel\n",
                2,
                "NAME=APP:TOKEN",
            ),
            (DOTENV, "OK=1\n= x\n", 2, "NAME=VALUE"),
        ] {
            let dir = pack_with(&[(file, text)]);
            assert_eq!(
                load(dir.path()).expect_err("malformed"),
                format!(
                    "{} line {line}: expected {form}",
                    dir.path().join(file).display()
                ),
                "{text:?}"
            );
        }
    }

    fn entry(needs: Value) -> ToolEntry {
        ToolEntry {
            id: "acme.tool".to_owned(),
            needs_spec: needs.as_object().cloned(),
            ..ToolEntry::default()
        }
    }

    #[test]
    fn fills_declared_env_defaults_the_call_lacks() {
        let values = CallValues::default();
        let tool = entry(json!({"env": {
            "REGION": {"type": "string", "default": "eu"},
            "RETRIES": {"type": "integer", "default": 3},
            "URL": {"type": "string"}
        }}));
        let mut message = json!({"ctx": {"tenantId": "t", "env": {"REGION": "us"}}});
        assert!(values.add_to(&mut message, &tool));
        assert_eq!(
            message["ctx"]["env"],
            json!({"REGION": "us", "RETRIES": "3"})
        );
        let mut full = json!({"ctx": {"env": {"REGION": "us", "RETRIES": "5"}}});
        assert!(!values.add_to(&mut full, &tool));
        assert_eq!(full["ctx"]["env"], json!({"REGION": "us", "RETRIES": "5"}));
    }

    #[test]
    fn adds_what_the_tool_declares_and_the_call_lacks() {
        let values = CallValues {
            secrets: [("API_KEY", "sk-1"), ("OTHER", "sk-2")]
                .into_iter()
                .map(|(n, v)| (n.to_owned(), Secret::new(v)))
                .collect(),
            connections: [
                ("crm", ("acme-crm", "tok")),
                ("mail", ("other-app", "tok2")),
            ]
            .into_iter()
            .map(|(n, (a, t))| (n.to_owned(), (a.to_owned(), Secret::new(t))))
            .collect(),
        };
        let tool = entry(json!({
            "secrets": {"API_KEY": {}, "MISSING": {}},
            "connections": {"crm": {"app": "acme-crm"}, "mail": {"app": "acme-mail"}}
        }));
        let mut message = json!({"kind": "invoke", "ctx": {"tenantId": "t", "runId": "r"}});
        assert!(values.add_to(&mut message, &tool));
        assert_eq!(message["ctx"]["secrets"], json!({"API_KEY": "sk-1"}));
        assert_eq!(
            message["ctx"]["connections"],
            json!({"crm": {"connectionId": "dev-crm", "app": "acme-crm", "appName": "acme-crm",
                "accessToken": "tok", "account": {"id": "dev", "label": "dev"}}})
        );

        let mut carried =
            json!({"ctx": {"secrets": {"API_KEY": "mine"}, "connections": {"crm": {"x": 1}}}});
        assert!(!values.add_to(&mut carried, &tool));
        assert_eq!(carried["ctx"]["secrets"], json!({"API_KEY": "mine"}));
        assert!(!values.add_to(&mut json!({"ctx": {}}), &entry(json!({}))));

        assert!(!values.covers(&tool));
        assert!(values.covers(&entry(
            json!({"secrets": {"API_KEY": {}}, "connections": {"crm": {"app": "acme-crm"}}})
        )));
        assert!(!values.covers(&entry(
            json!({"connections": {"mail": {"app": "acme-mail"}}})
        )));
    }
}
