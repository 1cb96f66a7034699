//! Running a declarative HTTP tool's spec for one call, as a runtime does:
//! fill the URL (percent-encoded), the headers and the body from the
//! input, add the secret, send within the timeout, check the status, read
//! at most 10 MiB of the body, parse it as JSON unless told not to.
//!
//! Every failure is the handler's error (`handler-throw`), worded as the
//! Node reference words it, and never holds a secret's value.

use std::fmt::Write as _;
use std::sync::OnceLock;

use http::{HeaderMap, HeaderName, HeaderValue};
use kindgi_protocol::percent::encode_component;
use serde_json::{Map, Value};

use super::http_spec::{DEFAULT_TIMEOUT, HttpAuth, HttpBody, HttpMethod, HttpSpec};
use crate::{ToolContext, ToolError};

/// The most of a response body a call reads.
pub(crate) const MAX_RESPONSE_BYTES: usize = 10 * 1024 * 1024;

/// The most of a failed call's body its error message keeps, in characters.
const ERROR_BODY_CHARS: usize = 512;

/// What a declarative HTTP tool's calls share: its spec, its id, and one
/// HTTP client (its connection pool), made on the first call.
#[derive(Debug)]
pub(crate) struct HttpRunner {
    spec: HttpSpec,
    tool_id: String,
    client: OnceLock<reqwest::Client>,
}

impl HttpRunner {
    /// The runner of `spec` for tool `tool_id`.
    pub(crate) fn new(spec: HttpSpec, tool_id: String) -> Self {
        Self {
            spec,
            tool_id,
            client: OnceLock::new(),
        }
    }

    /// Runs the spec with `input`, its secret from `ctx`.
    pub(crate) async fn call(&self, input: Value, ctx: &ToolContext) -> Result<Value, ToolError> {
        let client = self.client.get_or_init(|| {
            client(matches!(
                self.spec.authorization,
                Some(HttpAuth::Header { .. })
            ))
        });
        call(&self.spec, &self.tool_id, client, input, ctx).await
    }
}

/// Runs `spec` for tool `tool_id` with `input` through `client`, its
/// secret from `ctx`.
async fn call(
    spec: &HttpSpec,
    tool_id: &str,
    client: &reqwest::Client,
    input: Value,
    ctx: &ToolContext,
) -> Result<Value, ToolError> {
    let fail = |message: String| ToolError::new("Error", message);
    let Value::Object(input) = input else {
        return Err(fail(format!(
            "http-tool \"{tool_id}\" requires an object input for URL substitution; got {}",
            js_type(&input)
        )));
    };
    let (url, consumed) = fill_url(&spec.url_template, &input, tool_id).map_err(fail)?;
    let mut headers = HeaderMap::new();
    for (name, template) in &spec.headers {
        let value = fill_text(template, &input);
        let (Ok(name), Ok(value)) = (
            HeaderName::from_bytes(name.as_bytes()),
            HeaderValue::from_str(&value),
        ) else {
            return Err(fail(format!(
                "http-tool \"{tool_id}\": the header \"{name}\", filled from its input, has a character a header can't carry"
            )));
        };
        headers.append(name, value);
    }
    if let Some(auth) = &spec.authorization {
        add_secret(&mut headers, auth, ctx, tool_id).map_err(fail)?;
    }
    let body = body(spec, &input, &consumed);
    if let Some((_, Some(content_type))) = &body
        && !headers.contains_key(http::header::CONTENT_TYPE)
    {
        headers.insert(
            http::header::CONTENT_TYPE,
            HeaderValue::from_static(content_type),
        );
    }
    let timeout = spec.timeout.unwrap_or(DEFAULT_TIMEOUT);
    let mut request = client
        .request(method(spec.method), url.as_str())
        .headers(headers);
    if let Some((bytes, _)) = body {
        request = request.body(bytes);
    }
    let exchange = async {
        let response = request.send().await.map_err(|e| {
            fail(format!(
                "http-tool \"{tool_id}\" request failed: {}",
                without_url(&e)
            ))
        })?;
        read(response, spec, tool_id).await.map_err(fail)
    };
    match tokio::time::timeout(timeout, exchange).await {
        Ok(result) => result,
        Err(_) => Err(fail(format!(
            "http-tool \"{tool_id}\" timed out after {}ms",
            timeout.as_millis()
        ))),
    }
}

/// The client: redirects followed as `fetch` follows them, except that a
/// request carrying its secret in a header of its own stops at a redirect
/// to another origin (which would be sent that header; `Authorization`
/// is dropped there already).
fn client(secret_header: bool) -> reqwest::Client {
    let policy = if secret_header {
        reqwest::redirect::Policy::custom(|attempt| {
            let same_origin = attempt.previous().first().is_some_and(|first| {
                first.scheme() == attempt.url().scheme()
                    && first.host_str() == attempt.url().host_str()
                    && first.port_or_known_default() == attempt.url().port_or_known_default()
            });
            if attempt.previous().len() >= 20 || !same_origin {
                attempt.stop()
            } else {
                attempt.follow()
            }
        })
    } else {
        reqwest::redirect::Policy::limited(20)
    };
    let builder = reqwest::Client::builder().redirect(policy);
    #[cfg(feature = "native-tls")]
    let builder = builder.tls_backend_native();
    builder.build().unwrap_or_else(|_| reqwest::Client::new())
}

fn method(method: HttpMethod) -> reqwest::Method {
    match method {
        HttpMethod::Get => reqwest::Method::GET,
        HttpMethod::Post => reqwest::Method::POST,
        HttpMethod::Put => reqwest::Method::PUT,
        HttpMethod::Patch => reqwest::Method::PATCH,
        HttpMethod::Delete => reqwest::Method::DELETE,
    }
}

/// A send error's text without its URL (whose query may hold the input).
fn without_url(error: &reqwest::Error) -> String {
    let mut text = error.to_string();
    if let Some(url) = error.url() {
        text = text
            .replace(&format!(" ({url})"), "")
            .replace(url.as_str(), "<url>");
    }
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        let _ = write!(text, ": {cause}");
        source = cause.source();
    }
    text
}

/// The status, then the body, as the spec says.
async fn read(
    mut response: reqwest::Response,
    spec: &HttpSpec,
    tool_id: &str,
) -> Result<Value, String> {
    let (min, max) = spec.success.unwrap_or((200, 299));
    let status = response.status();
    if !(min..=max).contains(&status.as_u16()) {
        let text = match read_capped(&mut response, 2048).await {
            Ok((bytes, _)) => String::from_utf8_lossy(&bytes).into_owned(),
            Err(_) => "<no body>".to_owned(),
        };
        let text: String = text.chars().take(ERROR_BODY_CHARS).collect();
        return Err(format!(
            "http-tool \"{tool_id}\" got status {} {} — {text}",
            status.as_u16(),
            status.canonical_reason().unwrap_or_default()
        ));
    }
    let (bytes, truncated) = read_capped(&mut response, MAX_RESPONSE_BYTES)
        .await
        .map_err(|e| format!("http-tool \"{tool_id}\" could not read the response: {e}"))?;
    if truncated {
        return Err(format!(
            "http-tool \"{tool_id}\": the response body is longer than {MAX_RESPONSE_BYTES} bytes, the most this tool reads"
        ));
    }
    let text = String::from_utf8_lossy(&bytes);
    if !spec.parse_json.unwrap_or(true) {
        return Ok(Value::String(text.into_owned()));
    }
    if text.is_empty() {
        return Ok(Value::Null);
    }
    serde_json::from_str(&text)
        .map_err(|e| format!("http-tool \"{tool_id}\" response was not valid JSON: {e}"))
}

/// Up to `cap` bytes of the body, and whether there was more.
async fn read_capped(
    response: &mut reqwest::Response,
    cap: usize,
) -> Result<(Vec<u8>, bool), reqwest::Error> {
    let mut bytes = Vec::new();
    while let Some(chunk) = response.chunk().await? {
        let room = cap - bytes.len();
        if chunk.len() > room {
            bytes.extend_from_slice(&chunk[..room]);
            return Ok((bytes, true));
        }
        bytes.extend_from_slice(&chunk);
    }
    Ok((bytes, false))
}

/// The URL with its placeholders filled, percent-encoded, and the input
/// properties it took.
fn fill_url(
    template: &str,
    input: &Map<String, Value>,
    tool_id: &str,
) -> Result<(String, Vec<String>), String> {
    let mut consumed = Vec::new();
    let url = substitute(template, |name| {
        let Some(value) = input.get(name) else {
            return Err(format!(
                "http-tool \"{tool_id}\" urlTemplate references \"{{{name}}}\" but input has no such key"
            ));
        };
        let Some(text) = primitive_text(value) else {
            return Err(format!(
                "http-tool \"{tool_id}\" urlTemplate key \"{{{name}}}\" must be a primitive; got {}",
                js_type(value)
            ));
        };
        consumed.push(name.to_owned());
        Ok(Some(encode_component(&text)))
    })?;
    Ok((url, consumed))
}

/// A header value or text body with its placeholders filled as they are:
/// a name the input lacks stays as written, `null` is empty.
fn fill_text(template: &str, input: &Map<String, Value>) -> String {
    substitute(template, |name| {
        Ok::<_, String>(input.get(name).map(|value| match value {
            Value::Null => String::new(),
            other => primitive_text(other).unwrap_or_else(|| other.to_string()),
        }))
    })
    .unwrap_or_else(|_| template.to_owned())
}

/// `template` with each `{name}` replaced by what `fill` gives (`None`:
/// left as written).
fn substitute<E>(
    template: &str,
    mut fill: impl FnMut(&str) -> Result<Option<String>, E>,
) -> Result<String, E> {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let name_len = after
            .bytes()
            .take_while(|b| b.is_ascii_alphanumeric() || *b == b'_')
            .count();
        if name_len > 0 && after.as_bytes().get(name_len) == Some(&b'}') {
            let name = &after[..name_len];
            match fill(name)? {
                Some(text) => out.push_str(&text),
                None => {
                    out.push('{');
                    out.push_str(name);
                    out.push('}');
                }
            }
            rest = &after[name_len + 1..];
        } else {
            out.push('{');
            rest = after;
        }
    }
    out.push_str(rest);
    Ok(out)
}

/// A string, number or boolean as JavaScript's `String()` writes it;
/// `None` for `null`, an array or an object.
fn primitive_text(value: &Value) -> Option<String> {
    match value {
        Value::String(text) => Some(text.clone()),
        Value::Bool(flag) => Some(flag.to_string()),
        Value::Number(number) => Some(match number.as_f64() {
            Some(float) if float.fract() == 0.0 && float.abs() < 1e21 && !number.is_f64() => {
                number.to_string()
            }
            Some(float) if float.fract() == 0.0 && float.abs() < 1e21 => format!("{float:.0}"),
            _ => number.to_string(),
        }),
        Value::Null | Value::Array(_) | Value::Object(_) => None,
    }
}

/// What JavaScript's `typeof` says of `value`.
fn js_type(value: &Value) -> &'static str {
    match value {
        Value::String(_) => "string",
        Value::Number(_) => "number",
        Value::Bool(_) => "boolean",
        Value::Null | Value::Array(_) | Value::Object(_) => "object",
    }
}

/// Adds the secret as `auth` says, from the call's secrets.
fn add_secret(
    headers: &mut HeaderMap,
    auth: &HttpAuth,
    ctx: &ToolContext,
    tool_id: &str,
) -> Result<(), String> {
    let secret_ref = auth.secret();
    let Some(secret) = ctx.secret(secret_ref.name()) else {
        return Err(format!(
            "http-tool \"{tool_id}\" needs the secret \"{}\" ({}), which the call doesn't carry",
            secret_ref.name(),
            secret_ref.env_name()
        ));
    };
    let (name, value) = match auth {
        HttpAuth::Bearer(_) => (
            http::header::AUTHORIZATION,
            format!("Bearer {}", secret.expose()),
        ),
        HttpAuth::Header { name, .. } => (
            HeaderName::from_bytes(name.as_bytes())
                .map_err(|_| format!("http-tool \"{tool_id}\": {name:?} is not a header name"))?,
            secret.expose().to_owned(),
        ),
    };
    let Ok(mut value) = HeaderValue::from_str(&value) else {
        return Err(format!(
            "http-tool \"{tool_id}\": its secret {}/{} for the header \"{name}\" has a character a header can't carry: store the secret without it",
            secret_ref.env_name(),
            secret_ref.name()
        ));
    };
    value.set_sensitive(true);
    headers.insert(name, value);
    Ok(())
}

/// The body and its content type: none for a `GET` with no body given.
fn body(
    spec: &HttpSpec,
    input: &Map<String, Value>,
    consumed: &[String],
) -> Option<(Vec<u8>, Option<&'static str>)> {
    if spec.method == HttpMethod::Get && spec.body.is_none() {
        return None;
    }
    Some(match spec.body.as_ref().unwrap_or(&HttpBody::JsonInput) {
        HttpBody::JsonInput => {
            let rest: Map<String, Value> = input
                .iter()
                .filter(|(key, _)| !consumed.contains(key))
                .map(|(key, value)| (key.clone(), value.clone()))
                .collect();
            if rest.is_empty() {
                (Vec::new(), None)
            } else {
                (
                    Value::Object(rest).to_string().into_bytes(),
                    Some("application/json"),
                )
            }
        }
        HttpBody::InputPassthrough => (
            Value::Object(input.clone()).to_string().into_bytes(),
            Some("application/json"),
        ),
        HttpBody::Text(template) => (fill_text(template, input).into_bytes(), Some("text/plain")),
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn object(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(map) => map,
            _ => Map::new(),
        }
    }

    #[test]
    fn the_url_is_filled_percent_encoded_as_encode_uri_component() {
        let input =
            object(json!({"q": "a b/c?d&é", "n": 3, "f": 2.0, "x": 1.5, "t": true, "keep": "k"}));
        let (url, consumed) = fill_url(
            "https://h/s/{q}?n={n}&f={f}&x={x}&t={t}&m={}",
            &input,
            "t.id",
        )
        .expect("fills");
        assert_eq!(
            url,
            "https://h/s/a%20b%2Fc%3Fd%26%C3%A9?n=3&f=2&x=1.5&t=true&m={}"
        );
        assert_eq!(consumed, ["q", "n", "f", "x", "t"]);
        assert_eq!(
            fill_url("https://h/{nope}", &input, "t.id"),
            Err(
                "http-tool \"t.id\" urlTemplate references \"{nope}\" but input has no such key"
                    .to_owned()
            )
        );
        let nested = object(json!({"o": {"a": 1}, "z": null}));
        assert_eq!(
            fill_url("https://h/{o}", &nested, "t.id"),
            Err(
                "http-tool \"t.id\" urlTemplate key \"{o}\" must be a primitive; got object"
                    .to_owned()
            )
        );
        assert_eq!(
            fill_url("https://h/{z}", &nested, "t.id"),
            Err(
                "http-tool \"t.id\" urlTemplate key \"{z}\" must be a primitive; got object"
                    .to_owned()
            )
        );
    }

    #[test]
    fn text_is_filled_as_it_is_and_unknown_names_stay() {
        let input = object(json!({"a": "x y", "n": null, "k": 7}));
        assert_eq!(fill_text("{a}|{n}|{k}|{b}|{", &input), "x y||7|{b}|{");
    }

    #[test]
    fn the_body_leaves_out_what_the_url_took() {
        let input = object(json!({"id": "7", "note": "hi"}));
        let spec = HttpSpec::post("https://h/{id}");
        assert_eq!(
            body(&spec, &input, &["id".to_owned()]),
            Some((br#"{"note":"hi"}"#.to_vec(), Some("application/json")))
        );
        assert_eq!(
            body(&spec, &input, &["id".to_owned(), "note".to_owned()]),
            Some((Vec::new(), None))
        );
        assert_eq!(body(&HttpSpec::get("https://h"), &input, &[]), None);
        assert_eq!(
            body(
                &HttpSpec::get("https://h").body(HttpBody::InputPassthrough),
                &input,
                &["id".to_owned()]
            ),
            Some((
                br#"{"id":"7","note":"hi"}"#.to_vec(),
                Some("application/json")
            ))
        );
        assert_eq!(
            body(
                &HttpSpec::put("https://h").body(HttpBody::Text("n={note}".into())),
                &input,
                &[]
            ),
            Some((b"n=hi".to_vec(), Some("text/plain")))
        );
    }
}
