//! A request's envelope read by hand, for the fast reader ([`super::text`]):
//! the message, its `tool` or `check` and its `ctx` are gone through key by
//! key, and every other value — the input, the trace, a map of the context
//! — is read by serde_json straight into its type where it starts. A small
//! invoke is mostly envelope: read this way rather than as a tree, an echo
//! call costs a quarter less CPU (`bench/README.md`, "The speed pieces that
//! stay"). It is also stricter where the protocol is: serde's derived
//! reading would take a struct from an array of its fields.
//!
//! It reads only objects where the protocol has objects, a key at most
//! once where it names a field, and `null` for no field: anything else is
//! `None`, and the checked path finds the contract's error.

use std::borrow::Cow;

use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::{Map, Value};

use kindgi_protocol::CallContext;

/// Every field of either kind of request, as the body has them; unknown
/// fields are skipped. `I` is how the input is read.
pub(crate) struct Message<'a, I> {
    /// `v`, as the number JSON has.
    pub(crate) v: f64,
    /// `kind`, borrowed from the body unless written with escapes.
    pub(crate) kind: Cow<'a, str>,
    pub(crate) tool: Option<Named>,
    pub(crate) check: Option<Named>,
    pub(crate) input: Option<I>,
    pub(crate) trace: Option<Value>,
    pub(crate) config: Option<Map<String, Value>>,
    /// On the heap from the start: read in place, moved as a pointer.
    pub(crate) ctx: Option<Box<CallContext>>,
}

/// `tool` or `check`: an id, and a tool's version.
pub(crate) struct Named {
    pub(crate) id: String,
    pub(crate) version: Option<String>,
}

/// Reads `text` as a request's message, when it is one object whose known
/// fields each have their wire type (a `null` is no field's).
///
/// `read_input` reads the input where it starts, as far as the message is
/// known then: it is given the `kind` and `tool` read before it (the keys
/// may come in any order) and the text from the input on, and gives the
/// input and the bytes it took ([`value`] reads it by its type).
pub(crate) fn read<'a, I>(
    text: &'a str,
    mut read_input: impl FnMut(Option<&str>, Option<&Named>, &'a str) -> Option<(I, usize)>,
) -> Option<Message<'a, I>> {
    let mut at = Cursor { text, at: 0 };
    let mut v = None;
    let mut kind = None;
    let mut tool = None;
    let mut check = None;
    let mut input = None;
    let mut trace = None;
    let mut config = None;
    let mut ctx = None;
    at.object(|at, key| match key {
        "v" => fill(&mut v, at.number()?),
        "kind" => fill(&mut kind, at.string()?),
        "tool" => fill(&mut tool, at.named()?),
        "check" => fill(&mut check, at.named()?),
        "input" => {
            let (value, len) = read_input(kind.as_deref(), tool.as_ref(), at.rest()?)?;
            at.at += len;
            fill(&mut input, value)
        }
        "trace" => fill(&mut trace, at.value()?),
        "config" => fill(&mut config, at.value()?),
        "ctx" => at.context(&mut ctx),
        _ => at.value::<IgnoredAny>().map(drop),
    })?;
    at.end()?;
    Some(Message {
        v: v?,
        kind: kind?,
        tool,
        check,
        input,
        trace,
        config,
        ctx,
    })
}

/// Reads the JSON value that starts `text` as `T`: it, and the bytes it
/// took. The input reader of a message whose input is read by its type.
pub(crate) fn value<'a, T: Deserialize<'a>>(
    _kind: Option<&str>,
    _tool: Option<&Named>,
    text: &'a str,
) -> Option<(T, usize)> {
    let mut values = serde_json::Deserializer::from_str(text).into_iter::<T>();
    let value = values.next()?.ok()?;
    Some((value, values.byte_offset()))
}

/// Sets `field` to `value`; `None` when it was set already (a key twice).
fn fill<T>(field: &mut Option<T>, value: T) -> Option<()> {
    if field.is_some() {
        return None;
    }
    *field = Some(value);
    Some(())
}

/// The bytes that end a string's text written without escapes: its
/// closing quote, an escape, or a control character (which JSON refuses
/// raw; serde_json then says so).
const ENDS_PLAIN_TEXT: [bool; 256] = {
    let mut table = [false; 256];
    let mut byte = 0;
    while byte < 0x20 {
        table[byte] = true;
        byte += 1;
    }
    table[b'"' as usize] = true;
    table[b'\\' as usize] = true;
    table
};

/// Where the reader is in the text.
struct Cursor<'a> {
    text: &'a str,
    at: usize,
}

impl<'a> Cursor<'a> {
    /// The next byte that isn't JSON whitespace, which is then where the
    /// cursor is; `None` at the end.
    fn peek(&mut self) -> Option<u8> {
        let bytes = self.text.as_bytes();
        while let Some(&byte) = bytes.get(self.at) {
            if !matches!(byte, b' ' | b'\n' | b'\r' | b'\t') {
                return Some(byte);
            }
            self.at += 1;
        }
        None
    }

    /// Steps over `byte`, the next one past whitespace.
    fn eat(&mut self, byte: u8) -> Option<()> {
        (self.peek()? == byte).then(|| self.at += 1)
    }

    /// Only whitespace is left.
    fn end(&mut self) -> Option<()> {
        self.peek().is_none().then_some(())
    }

    /// The text from the cursor on.
    fn rest(&self) -> Option<&'a str> {
        self.text.get(self.at..)
    }

    /// The JSON value that starts here, read as `T` by serde_json; the
    /// cursor then after it.
    fn value<T: Deserialize<'a>>(&mut self) -> Option<T> {
        let (value, len) = value(None, None, self.rest()?)?;
        self.at += len;
        Some(value)
    }

    /// A number; `2`, as every request has it, without serde_json.
    fn number(&mut self) -> Option<f64> {
        let bytes = self.text.as_bytes();
        if self.peek()? == b'2' && matches!(bytes.get(self.at + 1), Some(b',' | b'}')) {
            self.at += 1;
            return Some(2.0);
        }
        self.value()
    }

    /// A string: borrowed from the text when written without escapes.
    fn string(&mut self) -> Option<Cow<'a, str>> {
        if self.peek()? != b'"' {
            return None;
        }
        let bytes = self.text.as_bytes();
        let start = self.at + 1;
        let mut end = start;
        while let Some(&byte) = bytes.get(end) {
            if ENDS_PLAIN_TEXT[usize::from(byte)] {
                break;
            }
            end += 1;
        }
        if bytes.get(end) == Some(&b'"') {
            self.at = end + 1;
            // The quotes are ASCII: the text between them is whole characters.
            return self.text.get(start..end).map(Cow::Borrowed);
        }
        self.escaped_string()
    }

    /// A string written with escapes (or no string): read by serde_json.
    /// Out of line, as few strings of a request have escapes: inlined, it
    /// would make every string's read save and restore registers for it.
    #[cold]
    #[inline(never)]
    fn escaped_string(&mut self) -> Option<Cow<'a, str>> {
        self.value::<String>().map(Cow::Owned)
    }

    /// An object: `each` reads the value of every key (it is given the
    /// key, with the cursor at its value).
    fn object(&mut self, mut each: impl FnMut(&mut Self, &str) -> Option<()>) -> Option<()> {
        self.eat(b'{')?;
        if self.peek()? == b'}' {
            self.at += 1;
            return Some(());
        }
        loop {
            let key = self.string()?;
            self.eat(b':')?;
            each(self, &key)?;
            match self.peek()? {
                b',' => self.at += 1,
                b'}' => {
                    self.at += 1;
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    /// `tool` or `check`: an object with a string `id` and, for a tool, a
    /// string `version`.
    fn named(&mut self) -> Option<Named> {
        let mut id = None;
        let mut version = None;
        self.object(|at, key| match key {
            "id" => fill(&mut id, at.string()?.into_owned()),
            "version" => fill(&mut version, at.string()?.into_owned()),
            _ => at.value::<IgnoredAny>().map(drop),
        })?;
        Some(Named { id: id?, version })
    }

    /// `ctx` into `field`: an object with a string `tenantId` and `runId`,
    /// and each other field of [`CallContext`] of its type when present
    /// (`settings` an object of objects). Read in place, on the heap: a
    /// context is some 400 bytes, which the request would otherwise copy
    /// at every move.
    fn context(&mut self, field: &mut Option<Box<CallContext>>) -> Option<()> {
        if field.is_some() {
            return None;
        }
        let ctx = field.insert(Box::default());
        let mut tenant_id = None;
        let mut run_id = None;
        let text = |at: &mut Self| at.string().map(Cow::into_owned);
        self.object(|at, key| match key {
            "tenantId" => fill(&mut tenant_id, text(at)?),
            "runId" => fill(&mut run_id, text(at)?),
            "projectId" => fill(&mut ctx.project_id, text(at)?),
            "orgId" => fill(&mut ctx.org_id, text(at)?),
            "requestId" => fill(&mut ctx.request_id, text(at)?),
            "idempotencyKey" => fill(&mut ctx.idempotency_key, text(at)?),
            "env" => fill(&mut ctx.env, at.value()?),
            "secrets" => fill(&mut ctx.secrets, at.value()?),
            "connections" => fill(&mut ctx.connections, at.value()?),
            "config" => fill(&mut ctx.config, at.value()?),
            "settings" => fill(&mut ctx.settings, at.value()?),
            "waitToken" => fill(&mut ctx.wait_token, at.value()?),
            "toolFiles" => fill(&mut ctx.tool_files, at.value()?),
            _ => at.value::<IgnoredAny>().map(drop),
        })?;
        let blocks_are_objects =
            |settings: &Map<String, Value>| settings.values().all(Value::is_object);
        if !ctx.settings.as_ref().is_none_or(blocks_are_objects) {
            return None;
        }
        ctx.tenant_id = tenant_id?;
        ctx.run_id = run_id?;
        Some(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind_of(text: &str) -> Option<String> {
        read(text, value::<Value>).map(|message| message.kind.into_owned())
    }

    #[test]
    fn whitespace_escapes_and_unknown_keys_read_as_json_has_them() {
        let text = " {\n\t\"v\" : 2 , \"k\\u0069nd\":\"in\\u0076oke\", \"x\": [1, {\"v\": 3}] ,\"tool\":{\"id\":\"a\"}} \r\n";
        assert_eq!(kind_of(text).as_deref(), Some("invoke"));
        let message =
            read(r#"{"v":2e0,"kind":"k","input":null}"#, value::<Value>).expect("a message");
        assert_eq!(message.v, 2.0);
        assert_eq!(message.input, Some(Value::Null));
    }

    #[test]
    fn the_input_is_read_knowing_the_kind_and_tool_before_it() {
        let mut seen = Vec::new();
        let mut read_input = |kind: Option<&str>, tool: Option<&Named>, text: &str| {
            seen.push((kind.map(str::to_owned), tool.map(|tool| tool.id.clone())));
            value::<Value>(kind, tool, text)
        };
        let text = r#"{"v":2,"kind":"invoke","tool":{"id":"a"},"input": [1, {"b":2}] ,"x":1}"#;
        let message = read(text, &mut read_input).expect("a message");
        assert_eq!(message.input, Some(serde_json::json!([1, {"b": 2}])));
        let text = r#"{"input":3,"kind":"invoke","tool":{"id":"a"},"v":2}"#;
        let message = read(text, &mut read_input).expect("a message");
        assert_eq!(message.input, Some(serde_json::json!(3)));
        assert_eq!(
            seen,
            [(Some("invoke".into()), Some("a".into())), (None, None)]
        );
    }

    #[test]
    fn a_kind_written_with_escapes_is_read() {
        let invoke = r#"{"kind":"invok\u0065","v":2,"tool":{"id":"x"}}"#;
        let message = read(invoke, value::<Value>).expect("an invoke");
        assert_eq!(message.kind, "invoke");
    }

    #[test]
    fn anything_but_one_object_of_typed_fields_is_refused() {
        for text in [
            "",
            "{",
            "[]",
            r#"{"v":2,"kind":"k"} x"#,
            r#"{"v":2,"kind":"k",}"#,
            r#"{"v":2 "kind":"k"}"#,
            r#"{"v":2,"kind":"k","v":2}"#,
            r#"{"v":2,"kind":"k","tool":{"id":"a","id":"b"}}"#,
            r#"{"v":2,"kind":"k","tool":["a"]}"#,
            r#"{"v":2,"kind":"k","tool":{"version":"1"}}"#,
            r#"{"v":2,"kind":"k","tool":{"id":"a","version":null}}"#,
            r#"{"v":2,"kind":"k","ctx":{"tenantId":"t"}}"#,
            r#"{"v":2,"kind":"k","ctx":["t","r"]}"#,
            r#"{"v":2,"kind":"k","ctx":{"tenantId":"t","runId":"r","env":{"A":1}}}"#,
            r#"{"v":2,"kind":"k","config":[]}"#,
            r#"{"v":2,"kind":"k","input":1 2}"#,
            r#"{"v":2,"kind":"a\u0000b\"}"#,
            "{\"v\":2,\"kind\":\"a\tb\"}",
            r#"{"v":2,"kind":"\ud800"}"#,
            r#"{"v":2}"#,
            r#"{"v":"2","kind":"k"}"#,
            r#"{"v":2x,"kind":"k"}"#,
        ] {
            assert!(kind_of(text).is_none(), "{text}");
        }
    }
}
