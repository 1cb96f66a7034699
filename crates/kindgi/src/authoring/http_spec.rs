//! A declarative HTTP tool (`spec: {kind: "http"}` of `tool.schema.json`):
//! the request a runtime makes for the tool, with no code in the pack.
//!
//! [`HttpSpec`] is the typed builder; it writes the index's `spec` exactly
//! as the schema spells it, and knows what the indexer checks of it (the
//! URL's `{placeholders}` are input properties in its path and query, the
//! secrets it names are declared). [`super::http_call`] runs it.

use std::time::Duration;

use serde_json::{Map, Value, json};

/// The HTTP methods a spec may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum HttpMethod {
    /// `GET` (no body unless one is given).
    Get,
    /// `POST`.
    Post,
    /// `PUT`.
    Put,
    /// `PATCH`.
    Patch,
    /// `DELETE`.
    Delete,
}

impl HttpMethod {
    /// As the spec spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Get => "GET",
            Self::Post => "POST",
            Self::Put => "PUT",
            Self::Patch => "PATCH",
            Self::Delete => "DELETE",
        }
    }
}

/// A secret the runtime resolves for the request (`ToolSecretRef`): the
/// deployment environment it lives in, and its name. Locally (`kindgi
/// dev`, `kindgi call --secret`, [`TestPack`](crate::testing::TestPack))
/// it is the call's secret of that name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SecretRef {
    env_name: String,
    name: String,
}

impl SecretRef {
    /// The secret `name` of the deployment environment `env_name` (e.g.
    /// `"production"`).
    pub fn new(env_name: impl Into<String>, name: impl Into<String>) -> Self {
        Self {
            env_name: env_name.into(),
            name: name.into(),
        }
    }

    /// The secret's name, which the tool declares with
    /// [`Tool::needs_secret`](crate::Tool::needs_secret).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Its deployment environment.
    pub fn env_name(&self) -> &str {
        &self.env_name
    }

    fn to_value(&self) -> Value {
        json!({"envName": self.env_name, "name": self.name})
    }
}

/// How the request carries a secret.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum HttpAuth {
    /// `Authorization: Bearer <secret>`.
    Bearer(SecretRef),
    /// `<header>: <secret>`.
    Header {
        /// The header's name.
        name: String,
        /// The secret.
        secret: SecretRef,
    },
}

impl HttpAuth {
    /// The secret it names.
    pub fn secret(&self) -> &SecretRef {
        match self {
            Self::Bearer(secret) | Self::Header { secret, .. } => secret,
        }
    }

    fn to_value(&self) -> Value {
        match self {
            Self::Bearer(secret) => json!({"kind": "bearer", "secretRef": secret.to_value()}),
            Self::Header { name, secret } => {
                json!({"kind": "header", "headerName": name, "secretRef": secret.to_value()})
            }
        }
    }
}

/// What the request's body is.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum HttpBody {
    /// The input as JSON, without the properties the URL took (the
    /// default for every method but `GET`).
    JsonInput,
    /// The whole input as JSON.
    InputPassthrough,
    /// Text, its `{placeholders}` filled from the input, as `text/plain`.
    Text(String),
}

impl HttpBody {
    fn to_value(&self) -> Value {
        match self {
            Self::JsonInput => json!({"kind": "json-input"}),
            Self::InputPassthrough => json!({"kind": "input-passthrough"}),
            Self::Text(template) => json!({"kind": "text", "template": template}),
        }
    }
}

/// A declarative HTTP tool's request: what a runtime sends for each call,
/// its `{placeholders}` filled from the call's input.
///
/// ```
/// use std::time::Duration;
/// use kindgi::{HttpSpec, SecretRef, Tool};
/// # use schemars::JsonSchema; use serde::{Deserialize, Serialize};
/// # #[derive(Deserialize, JsonSchema)] struct City { city: String }
/// # #[derive(Serialize, JsonSchema)] struct Weather { celsius: f64 }
/// let weather = Tool::new("acme.weather")
///     .description("Today's weather in a city.")
///     .needs_secret("WEATHER_TOKEN")
///     .http::<City, Weather>(
///         HttpSpec::get("https://api.example.com/weather/{city}")
///             .header("Accept", "application/json")
///             .bearer(SecretRef::new("production", "WEATHER_TOKEN"))
///             .timeout(Duration::from_secs(5)),
///     );
/// assert_eq!(weather.id(), "acme.weather");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[must_use = "a builder does nothing until it is used"]
pub struct HttpSpec {
    pub(crate) method: HttpMethod,
    pub(crate) url_template: String,
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) authorization: Option<HttpAuth>,
    pub(crate) body: Option<HttpBody>,
    pub(crate) timeout: Option<Duration>,
    pub(crate) parse_json: Option<bool>,
    pub(crate) success: Option<(u16, u16)>,
}

/// How long a request may take, body included, unless the spec says.
pub(crate) const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

impl HttpSpec {
    /// A request with `method` to `url_template`, whose `{name}`
    /// placeholders (letters, digits, `_`) are filled from the input's
    /// properties of that name, percent-encoded. They may stand in the
    /// path and the query, never in the scheme, host or port.
    pub fn new(method: HttpMethod, url_template: impl Into<String>) -> Self {
        Self {
            method,
            url_template: url_template.into(),
            headers: Vec::new(),
            authorization: None,
            body: None,
            timeout: None,
            parse_json: None,
            success: None,
        }
    }

    /// A `GET`.
    pub fn get(url_template: impl Into<String>) -> Self {
        Self::new(HttpMethod::Get, url_template)
    }

    /// A `POST`.
    pub fn post(url_template: impl Into<String>) -> Self {
        Self::new(HttpMethod::Post, url_template)
    }

    /// A `PUT`.
    pub fn put(url_template: impl Into<String>) -> Self {
        Self::new(HttpMethod::Put, url_template)
    }

    /// A `PATCH`.
    pub fn patch(url_template: impl Into<String>) -> Self {
        Self::new(HttpMethod::Patch, url_template)
    }

    /// A `DELETE`.
    pub fn delete(url_template: impl Into<String>) -> Self {
        Self::new(HttpMethod::Delete, url_template)
    }

    /// A header; `{placeholders}` in its value are filled from the input
    /// as they are (a name the input lacks stays as written).
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Sends the secret as `Authorization: Bearer <secret>`.
    pub fn bearer(mut self, secret: SecretRef) -> Self {
        self.authorization = Some(HttpAuth::Bearer(secret));
        self
    }

    /// Sends the secret as the value of header `name`.
    pub fn auth_header(mut self, name: impl Into<String>, secret: SecretRef) -> Self {
        self.authorization = Some(HttpAuth::Header {
            name: name.into(),
            secret,
        });
        self
    }

    /// The body (default: [`HttpBody::JsonInput`], and none for `GET`).
    pub fn body(mut self, body: HttpBody) -> Self {
        self.body = Some(body);
        self
    }

    /// How long the request may take, its body read included (default
    /// 30 s); at least 1 ms.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// `false` returns the response body as a string instead of parsing
    /// it as JSON (default `true`).
    pub fn parse_json(mut self, parse: bool) -> Self {
        self.parse_json = Some(parse);
        self
    }

    /// The statuses that succeed, `min..=max` (default 200–299); any other
    /// fails the call with the start of the response body.
    pub fn success_status(mut self, statuses: std::ops::RangeInclusive<u16>) -> Self {
        self.success = Some((*statuses.start(), *statuses.end()));
        self
    }

    /// The method.
    pub fn method(&self) -> HttpMethod {
        self.method
    }

    /// The URL template.
    pub fn url_template(&self) -> &str {
        &self.url_template
    }

    /// How the request carries a secret, if it does.
    pub fn authorization(&self) -> Option<&HttpAuth> {
        self.authorization.as_ref()
    }

    /// The spec as the index carries it (`tool.schema.json`'s
    /// `HttpToolSpec`): only what was set, so that the runtime applies the
    /// same defaults.
    pub fn to_value(&self) -> Value {
        let mut spec = Map::new();
        spec.insert("kind".into(), Value::from("http"));
        spec.insert("method".into(), Value::from(self.method.as_str()));
        spec.insert(
            "urlTemplate".into(),
            Value::from(self.url_template.as_str()),
        );
        if !self.headers.is_empty() {
            let headers = self
                .headers
                .iter()
                .map(|(name, value)| json!({"name": name, "value": value}))
                .collect();
            spec.insert("headers".into(), Value::Array(headers));
        }
        if let Some(auth) = &self.authorization {
            spec.insert("authorization".into(), auth.to_value());
        }
        if let Some(body) = &self.body {
            spec.insert("requestBody".into(), body.to_value());
        }
        if let Some(timeout) = self.timeout {
            let ms = u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX);
            spec.insert("timeoutMs".into(), Value::from(ms));
        }
        if let Some(parse) = self.parse_json {
            spec.insert("parseJson".into(), Value::from(parse));
        }
        if let Some((min, max)) = self.success {
            spec.insert("successStatus".into(), json!({"min": min, "max": max}));
        }
        Value::Object(spec)
    }

    /// What the indexer refuses in this spec, for tool `owner` (`tool "id"
    /// (file)`) whose input schema is `input` and whose declared needs are
    /// `needs_spec`.
    pub(crate) fn problems(
        &self,
        owner: &str,
        input: &Value,
        needs_spec: &Map<String, Value>,
    ) -> Vec<String> {
        let mut problems = Vec::new();
        if let Some(problem) = origin_problem(&self.url_template) {
            problems.push(format!("{owner}: its HTTP spec's URL {problem}"));
        }
        let properties = input.get("properties").and_then(Value::as_object);
        for name in placeholders(&self.url_template) {
            if !properties.is_some_and(|p| p.contains_key(name)) {
                problems.push(format!(
                    "{owner}: its HTTP spec's URL fills {{{name}}}, which is not a property of its input: add `{name}` to the input type, or change the URL"
                ));
            }
        }
        if let Some(auth) = &self.authorization {
            let secret = auth.secret();
            let declared = needs_spec
                .get("secrets")
                .and_then(Value::as_object)
                .is_some_and(|s| s.contains_key(secret.name()));
            if !declared {
                problems.push(format!(
                    "{owner}: its HTTP spec sends the secret \"{}\", which the tool doesn't declare: call .needs_secret(\"{}\")",
                    secret.name(),
                    secret.name()
                ));
            }
            if secret.name().is_empty() || secret.env_name().is_empty() {
                problems.push(format!(
                    "{owner}: its HTTP spec's secret needs a name and an environment name"
                ));
            }
            if let HttpAuth::Header { name, .. } = auth
                && http::HeaderName::from_bytes(name.as_bytes()).is_err()
            {
                problems.push(format!(
                    "{owner}: its HTTP spec's authorization header name {name:?} is not a header name"
                ));
            }
        }
        for (name, _) in &self.headers {
            if http::HeaderName::from_bytes(name.as_bytes()).is_err() {
                problems.push(format!(
                    "{owner}: its HTTP spec's header name {name:?} is not a header name"
                ));
            }
        }
        if self.timeout.is_some_and(|t| t < Duration::from_millis(1)) {
            problems.push(format!(
                "{owner}: its HTTP spec's timeout is under 1 ms: give at least 1 ms"
            ));
        }
        if let Some((min, max)) = self.success
            && (!(100..=599).contains(&min) || !(100..=599).contains(&max) || min > max)
        {
            problems.push(format!(
                "{owner}: its HTTP spec's success statuses {min}..={max} are not a range within 100..=599"
            ));
        }
        problems
    }
}

/// The `{name}` placeholders of `template`, in order (a name is letters,
/// digits and `_`, as JavaScript's `\w` reads them).
pub(crate) fn placeholders(template: &str) -> impl Iterator<Item = &str> {
    template.split('{').skip(1).filter_map(|rest| {
        let (name, _) = rest.split_once('}')?;
        (!name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'))
            .then_some(name)
    })
}

/// Why `template` can't be a request's URL, if it can't: it must start
/// with `http://` or `https://` and a host, and fill nothing in its host
/// or port (a call's input would choose where the request goes).
fn origin_problem(template: &str) -> Option<&'static str> {
    let lower = template.to_ascii_lowercase();
    let Some(rest) = lower
        .strip_prefix("https://")
        .or_else(|| lower.strip_prefix("http://"))
    else {
        return Some("must start with http:// or https:// and a host");
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    if authority.contains(['{', '}']) {
        Some("fills {placeholders} in its path and query only, never in its host or port")
    } else if authority.is_empty() {
        Some("must name a host")
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_index_carries_only_what_was_set() {
        assert_eq!(
            HttpSpec::get("https://api.example.com/x").to_value(),
            json!({"kind": "http", "method": "GET", "urlTemplate": "https://api.example.com/x"})
        );
        let full = HttpSpec::post("https://api.example.com/orders/{id}")
            .header("Accept", "application/json")
            .auth_header("X-Api-Key", SecretRef::new("production", "KEY"))
            .body(HttpBody::Text("id={id}".into()))
            .timeout(Duration::from_millis(2500))
            .parse_json(false)
            .success_status(200..=204);
        assert_eq!(
            full.to_value(),
            json!({"kind": "http", "method": "POST", "urlTemplate": "https://api.example.com/orders/{id}",
                "headers": [{"name": "Accept", "value": "application/json"}],
                "authorization": {"kind": "header", "headerName": "X-Api-Key",
                    "secretRef": {"envName": "production", "name": "KEY"}},
                "requestBody": {"kind": "text", "template": "id={id}"},
                "timeoutMs": 2500, "parseJson": false, "successStatus": {"min": 200, "max": 204}})
        );
        assert_eq!(
            HttpSpec::delete("http://h/{a}")
                .bearer(SecretRef::new("staging", "T"))
                .body(HttpBody::InputPassthrough)
                .to_value()["authorization"],
            json!({"kind": "bearer", "secretRef": {"envName": "staging", "name": "T"}})
        );
    }

    #[test]
    fn placeholders_are_word_names_in_braces() {
        let found: Vec<&str> = placeholders("https://h/{a}/{b_2}?q={c}&x={}&y={no-dash}").collect();
        assert_eq!(found, ["a", "b_2", "c"]);
    }

    #[test]
    fn the_origin_is_fixed() {
        assert_eq!(origin_problem("https://api.example.com/{a}"), None);
        assert_eq!(origin_problem("HTTP://api.example.com:8080?q={a}"), None);
        assert_eq!(
            origin_problem("ftp://x"),
            Some("must start with http:// or https:// and a host")
        );
        assert_eq!(origin_problem("https:///path"), Some("must name a host"));
        assert_eq!(
            origin_problem("https://{tenant}.example.com/"),
            Some("fills {placeholders} in its path and query only, never in its host or port")
        );
        assert_eq!(
            origin_problem("https://example.com:{port}/"),
            Some("fills {placeholders} in its path and query only, never in its host or port")
        );
    }

    #[test]
    fn the_indexer_names_each_problem_and_its_fix() {
        let owner = "tool \"acme.get\" (src/lib.rs)";
        let input = json!({"type": "object", "properties": {"id": {"type": "string"}}});
        let spec = HttpSpec::get("https://{host}/items/{id}/{missing}")
            .bearer(SecretRef::new("production", "TOKEN"))
            .header("Bad Header", "x")
            .timeout(Duration::ZERO)
            .success_status(std::ops::RangeInclusive::new(300, 200));
        assert_eq!(
            spec.problems(owner, &input, &Map::new()),
            [
                "tool \"acme.get\" (src/lib.rs): its HTTP spec's URL fills {placeholders} in its path and query only, never in its host or port",
                "tool \"acme.get\" (src/lib.rs): its HTTP spec's URL fills {host}, which is not a property of its input: add `host` to the input type, or change the URL",
                "tool \"acme.get\" (src/lib.rs): its HTTP spec's URL fills {missing}, which is not a property of its input: add `missing` to the input type, or change the URL",
                "tool \"acme.get\" (src/lib.rs): its HTTP spec sends the secret \"TOKEN\", which the tool doesn't declare: call .needs_secret(\"TOKEN\")",
                "tool \"acme.get\" (src/lib.rs): its HTTP spec's header name \"Bad Header\" is not a header name",
                "tool \"acme.get\" (src/lib.rs): its HTTP spec's timeout is under 1 ms: give at least 1 ms",
                "tool \"acme.get\" (src/lib.rs): its HTTP spec's success statuses 300..=200 are not a range within 100..=599",
            ]
        );
        let needs = json!({"secrets": {"TOKEN": {}}});
        let good = HttpSpec::get("https://api.example.com/items/{id}")
            .bearer(SecretRef::new("production", "TOKEN"));
        assert!(
            good.problems(owner, &input, needs.as_object().expect("object"))
                .is_empty()
        );
    }
}
