//! The run trace a guardrail check reads, field by field.

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The run trace a check evaluates (`RunTrace` of `@kindgi/guardrails`),
/// exactly as the runtime sent it.
///
/// Every part is read on its own, so a part of an unexpected type never
/// hides another: a trace whose `toolCalls` is `null` still shows its
/// `output`. A list accessor tells the three cases apart — absent
/// (`Ok(None)`), as expected (`Ok(Some(..))`), or not the expected shape
/// (`Err`) — and [`RunTrace::raw`] is always the trace as sent.
///
/// ```
/// use kindgi::RunTrace;
/// use serde_json::json;
///
/// let trace = RunTrace::from_value(json!({
///     "output": "card 4111 1111 1111 1111",
///     "toolCalls": null,
/// }));
/// assert_eq!(trace.output_text(), Some("card 4111 1111 1111 1111"));
/// let err = trace.tool_calls().expect_err("null is not a list");
/// assert_eq!(err.to_string(), "the trace's `toolCalls` is null, not an array");
/// assert_eq!(trace.tool_results(), Ok(None));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct RunTrace {
    raw: Value,
}

/// A part of the trace that isn't the shape its accessor reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceShapeError {
    field: &'static str,
    expected: &'static str,
    found: &'static str,
}

impl TraceShapeError {
    /// The part's name on the wire (`toolCalls`).
    pub fn field(&self) -> &'static str {
        self.field
    }

    /// The JSON type the part has (`null`, `string`, `object`, …).
    pub fn found(&self) -> &'static str {
        self.found
    }
}

impl fmt::Display for TraceShapeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let article = if self.found == "object" || self.found == "array" {
            "an "
        } else if self.found == "null" {
            ""
        } else {
            "a "
        };
        write!(
            f,
            "the trace's `{}` is {article}{}, not {}",
            self.field, self.found, self.expected
        )
    }
}

impl std::error::Error for TraceShapeError {}

/// The JSON type of `value`, as a message names it.
fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

impl RunTrace {
    /// The trace as the runtime sent it. Nothing is dropped or converted.
    pub fn from_value(raw: Value) -> Self {
        Self { raw }
    }

    /// The trace as sent.
    pub fn raw(&self) -> &Value {
        &self.raw
    }

    /// The trace as sent, taken out.
    pub fn into_raw(self) -> Value {
        self.raw
    }

    /// Any part of the trace by its wire name, as sent; `None` when it is
    /// absent (or the trace isn't an object).
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.raw.get(name)
    }

    /// The run's (or turn's) output, of whatever type it was sent; `None`
    /// when absent.
    pub fn output(&self) -> Option<&Value> {
        self.get("output")
    }

    /// The output when it is text.
    pub fn output_text(&self) -> Option<&str> {
        self.output().and_then(Value::as_str)
    }

    /// The run's id (`runId`), when it is text.
    pub fn run_id(&self) -> Option<&str> {
        self.get("runId").and_then(Value::as_str)
    }

    /// The tenant's id (`tenantId`), when it is text.
    pub fn tenant_id(&self) -> Option<&str> {
        self.get("tenantId").and_then(Value::as_str)
    }

    /// The tool calls the run made (`toolCalls`).
    ///
    /// # Errors
    ///
    /// [`TraceShapeError`] when `toolCalls` is there but isn't an array.
    pub fn tool_calls(&self) -> Result<Option<&[Value]>, TraceShapeError> {
        self.list("toolCalls")
    }

    /// Their results (`toolResults`).
    ///
    /// # Errors
    ///
    /// [`TraceShapeError`] when `toolResults` is there but isn't an array.
    pub fn tool_results(&self) -> Result<Option<&[Value]>, TraceShapeError> {
        self.list("toolResults")
    }

    /// The model calls the run made (`modelCalls`).
    ///
    /// # Errors
    ///
    /// [`TraceShapeError`] when `modelCalls` is there but isn't an array.
    pub fn model_calls(&self) -> Result<Option<&[Value]>, TraceShapeError> {
        self.list("modelCalls")
    }

    /// Every string anywhere in the trace (object keys excluded): arrays in
    /// order, objects by key. What a check that must see all the text scans.
    ///
    /// ```
    /// use kindgi::RunTrace;
    /// let trace = RunTrace::from_value(serde_json::json!({
    ///     "output": {"reply": "hi"}, "toolResults": "x",
    /// }));
    /// assert_eq!(trace.strings().collect::<Vec<_>>(), ["hi", "x"]);
    /// ```
    pub fn strings(&self) -> impl Iterator<Item = &str> {
        strings_in(&self.raw)
    }

    /// Every string in the output: the output itself when it is text, the
    /// strings inside it when it is structured, nothing when it is absent.
    ///
    /// ```
    /// use kindgi::RunTrace;
    /// let trace = RunTrace::from_value(serde_json::json!({
    ///     "output": {"reply": "hi", "cc": ["ops"]}, "runId": "r",
    /// }));
    /// assert_eq!(trace.output_strings().collect::<Vec<_>>(), ["ops", "hi"]);
    /// ```
    pub fn output_strings(&self) -> impl Iterator<Item = &str> {
        self.output().into_iter().flat_map(strings_in)
    }

    fn list(&self, field: &'static str) -> Result<Option<&[Value]>, TraceShapeError> {
        match self.get(field) {
            None => Ok(None),
            Some(Value::Array(items)) => Ok(Some(items)),
            Some(other) => Err(TraceShapeError {
                field,
                expected: "an array",
                found: type_name(other),
            }),
        }
    }
}

/// Every string in `value`: arrays in order, objects by key.
fn strings_in(value: &Value) -> impl Iterator<Item = &str> {
    let mut stack = vec![value];
    std::iter::from_fn(move || {
        while let Some(value) = stack.pop() {
            match value {
                Value::String(text) => return Some(text.as_str()),
                Value::Array(items) => stack.extend(items.iter().rev()),
                Value::Object(map) => {
                    let values: Vec<&Value> = map.values().collect();
                    stack.extend(values.into_iter().rev());
                }
                Value::Null | Value::Bool(_) | Value::Number(_) => {}
            }
        }
        None
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_part_of_another_type_hides_nothing_else() {
        for (field, value, found) in [
            ("toolCalls", json!(null), "null"),
            ("toolResults", json!("x"), "string"),
            ("modelCalls", json!({}), "object"),
        ] {
            let mut raw = json!({"output": "card 4111 1111 1111 1111", "runId": "r"});
            raw[field] = value.clone();
            let trace = RunTrace::from_value(raw.clone());
            assert_eq!(trace.output_text(), Some("card 4111 1111 1111 1111"));
            assert_eq!(trace.run_id(), Some("r"));
            assert_eq!(trace.raw(), &raw);
            assert_eq!(trace.get(field), Some(&value));
            let err = match field {
                "toolCalls" => trace.tool_calls(),
                "toolResults" => trace.tool_results(),
                _ => trace.model_calls(),
            }
            .expect_err("not a list");
            assert_eq!((err.field(), err.found()), (field, found));
        }
    }

    #[test]
    fn absent_present_and_misshapen_are_told_apart() {
        let trace = RunTrace::from_value(json!({"toolCalls": [{"id": 1}], "modelCalls": 3}));
        assert_eq!(trace.tool_calls(), Ok(Some(&[json!({"id": 1})][..])));
        assert_eq!(trace.tool_results(), Ok(None));
        assert_eq!(
            trace.model_calls().expect_err("number").to_string(),
            "the trace's `modelCalls` is a number, not an array"
        );
        assert_eq!(
            RunTrace::from_value(json!({"toolCalls": {}}))
                .tool_calls()
                .expect_err("object")
                .to_string(),
            "the trace's `toolCalls` is an object, not an array"
        );
        assert_eq!(trace.output(), None);
    }

    #[test]
    fn a_trace_that_is_not_an_object_is_kept_as_sent() {
        let trace = RunTrace::from_value(json!("card 4111 1111 1111 1111"));
        assert_eq!(trace.output(), None);
        assert_eq!(trace.tool_calls(), Ok(None));
        assert_eq!(
            trace.strings().collect::<Vec<_>>(),
            ["card 4111 1111 1111 1111"]
        );
    }

    #[test]
    fn strings_walk_the_whole_trace() {
        let trace = RunTrace::from_value(json!({
            "output": "a",
            "toolCalls": [{"args": {"x": "b", "n": 1}}, "c"],
            "modelCalls": {"k": ["d", null, true]},
        }));
        assert_eq!(trace.strings().collect::<Vec<_>>(), ["d", "a", "b", "c"]);
    }
}
