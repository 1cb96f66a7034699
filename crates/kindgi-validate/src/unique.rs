//! Which pair of duplicate items Ajv's `uniqueItems` reports.
//!
//! Ajv scans from the last item down and stops at the first duplicate it finds.
//! When the schema's `items` declares only scalar types it uses a lookup table
//! (reporting the lower index as `i` and the higher as `j`, skipping items of
//! other types); otherwise it compares pairs (reporting the higher as `i`).

use serde_json::Value;

use crate::js;

/// `(i, j)` as Ajv puts them in `params`, or `None` when all items differ.
pub(crate) fn duplicate_pair(
    items: &[Value],
    items_schema: Option<&Value>,
) -> Option<(usize, usize)> {
    let item_types = declared_types(items_schema);
    let scalar_only =
        !item_types.is_empty() && !item_types.iter().any(|t| *t == "object" || *t == "array");
    if scalar_only {
        table_scan(items, &item_types)
    } else {
        pair_scan(items)
    }
}

fn declared_types(items_schema: Option<&Value>) -> Vec<&str> {
    match items_schema.and_then(|s| s.get("type")) {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(types)) => types.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

fn has_type(value: &Value, types: &[&str]) -> bool {
    types.iter().any(|t| match *t {
        "string" => value.is_string(),
        "number" => value.is_number(),
        "integer" => value.as_f64().is_some_and(|x| x.fract() == 0.0),
        "boolean" => value.is_boolean(),
        "null" => value.is_null(),
        _ => false,
    })
}

fn table_scan(items: &[Value], types: &[&str]) -> Option<(usize, usize)> {
    // Indices seen so far, walking down; each value keeps its first (highest) index.
    let mut seen: Vec<usize> = Vec::new();
    for i in (0..items.len()).rev() {
        let item = &items[i];
        if !has_type(item, types) {
            continue;
        }
        if let Some(&j) = seen.iter().find(|&&j| js::equal(&items[j], item)) {
            return Some((i, j));
        }
        seen.push(i);
    }
    None
}

fn pair_scan(items: &[Value]) -> Option<(usize, usize)> {
    for i in (0..items.len()).rev() {
        for j in (0..i).rev() {
            if js::equal(&items[i], &items[j]) {
                return Some((i, j));
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn items(v: Value) -> Vec<Value> {
        v.as_array().cloned().unwrap_or_default()
    }

    #[test]
    fn pair_scan_reports_higher_index_as_i() {
        assert_eq!(
            duplicate_pair(&items(json!([1, 2, 1, 1])), None),
            Some((3, 2))
        );
        assert_eq!(
            duplicate_pair(&items(json!([{"a": 1}, 2, {"a": 1.0}])), None),
            Some((2, 0))
        );
        assert_eq!(duplicate_pair(&items(json!([1, 2, 3])), None), None);
    }

    #[test]
    fn table_scan_reports_lower_index_as_i() {
        let schema = json!({"type": "integer"});
        assert_eq!(
            duplicate_pair(&items(json!([1, 2, 1, 1])), Some(&schema)),
            Some((2, 3))
        );
        assert_eq!(
            duplicate_pair(&items(json!([1, 2, 1])), Some(&schema)),
            Some((0, 2))
        );
        // Items of another type are skipped.
        assert_eq!(
            duplicate_pair(&items(json!(["a", 1, "a"])), Some(&schema)),
            None
        );
    }
}
