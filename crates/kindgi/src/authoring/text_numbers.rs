//! Typed input read straight from JSON text as
//! [`read_typed`](super::numbers::read_typed) reads it from a tree: every
//! integral float up to `Number.MAX_SAFE_INTEGER` (`5.00`, `-3e2`) reaches
//! the type as the integer it is, and every integer past it as the `f64`
//! nearest it. A deserializer wrapped around serde_json's own passes
//! everything through, but for those numbers.
//!
//! A `RawValue` in the type is refused here: read from a tree it is the
//! tree printed, from text the text as written, and the two differ. The
//! caller then reads the tree.

use std::fmt;
use std::marker::PhantomData;

#[cfg(test)]
use kindgi_validate::TextRefusal;
use kindgi_validate::{Validator, ValueRead};
use serde::de::{
    self, DeserializeSeed, Deserializer, EnumAccess, MapAccess, SeqAccess, VariantAccess, Visitor,
};

use super::numbers::{MAX_SAFE_INTEGER, exact_integer};

/// The name serde_json gives the newtype its `RawValue` reads through.
const RAW_VALUE_TOKEN: &str = "$serde_json::private::RawValue";

/// Reads `text` into `T`, integral floats as integers, every value checked
/// against `validator` as it is read, in one pass
/// ([`Validator::read_checked`]).
#[cfg(test)]
pub(crate) fn from_text_passing<T: de::DeserializeOwned>(
    text: &str,
    validator: &Validator,
) -> Result<T, TextRefusal> {
    validator.read_checked(text, Integral(PhantomData::<T>))
}

/// Reads the JSON value that starts `text` into `T`, integral floats as
/// integers, every value checked against `validator` as it is read
/// ([`Validator::read_checked_value`]): what was read, and the bytes it
/// took; `None` when no JSON value starts it.
pub(crate) fn value_from_text_passing<T: de::DeserializeOwned>(
    text: &str,
    validator: &Validator,
) -> Option<ValueRead<T>> {
    validator.read_checked_value(text, Integral(PhantomData::<T>))
}

/// Reads `text` into `T`, integral floats as integers.
#[cfg(test)]
pub(crate) fn from_text<T: de::DeserializeOwned>(text: &[u8]) -> serde_json::Result<T> {
    // Checked once here rather than string by string.
    let text = std::str::from_utf8(text).map_err(de::Error::custom)?;
    let mut reader = serde_json::Deserializer::from_str(text);
    let value = T::deserialize(Integral(&mut reader))?;
    reader.end()?;
    Ok(value)
}

/// A deserializer, visitor, seed or access with integral floats as integers.
struct Integral<X>(X);

/// Gives `visitor` the float `f`, or the integer it is.
fn visit_number<'de, V: Visitor<'de>, E: de::Error>(visitor: V, f: f64) -> Result<V::Value, E> {
    match exact_integer(f) {
        // As a tree's integer: non-negative ones (`-0.0` too) unsigned.
        Some(integer) => match u64::try_from(integer) {
            Ok(unsigned) => visitor.visit_u64(unsigned),
            Err(_) => visitor.visit_i64(integer),
        },
        None => visitor.visit_f64(f),
    }
}

macro_rules! forward_deserialize {
    ($($method:ident)*) => {$(
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
            self.0.$method(Integral(visitor))
        }
    )*};
}

impl<'de, D: Deserializer<'de>> Deserializer<'de> for Integral<D> {
    type Error = D::Error;

    forward_deserialize! {
        deserialize_any deserialize_bool deserialize_i8 deserialize_i16 deserialize_i32
        deserialize_i64 deserialize_i128 deserialize_u8 deserialize_u16 deserialize_u32
        deserialize_u64 deserialize_u128 deserialize_f32 deserialize_f64 deserialize_char
        deserialize_str deserialize_string deserialize_bytes deserialize_byte_buf
        deserialize_option deserialize_unit deserialize_seq deserialize_map
        deserialize_identifier deserialize_ignored_any
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        self.0.deserialize_unit_struct(name, Integral(visitor))
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        if name == RAW_VALUE_TOKEN {
            return Err(de::Error::custom("a RawValue is read from the tree"));
        }
        self.0.deserialize_newtype_struct(name, Integral(visitor))
    }

    fn deserialize_tuple<V: Visitor<'de>>(
        self,
        len: usize,
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        self.0.deserialize_tuple(len, Integral(visitor))
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        len: usize,
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        self.0
            .deserialize_tuple_struct(name, len, Integral(visitor))
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        self.0.deserialize_struct(name, fields, Integral(visitor))
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        self.0.deserialize_enum(name, variants, Integral(visitor))
    }

    fn is_human_readable(&self) -> bool {
        self.0.is_human_readable()
    }
}

macro_rules! forward_visit {
    ($($method:ident: $ty:ty)*) => {$(
        fn $method<E: de::Error>(self, v: $ty) -> Result<Self::Value, E> {
            self.0.$method(v)
        }
    )*};
}

impl<'de, V: Visitor<'de>> Visitor<'de> for Integral<V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.expecting(f)
    }

    forward_visit! {
        visit_bool: bool visit_i8: i8 visit_i16: i16 visit_i32: i32
        visit_i128: i128 visit_u8: u8 visit_u16: u16 visit_u32: u32
        visit_u128: u128 visit_f32: f32 visit_char: char visit_str: &str
        visit_borrowed_str: &'de str visit_string: String visit_bytes: &[u8]
        visit_borrowed_bytes: &'de [u8] visit_byte_buf: Vec<u8>
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
        visit_number(self.0, v)
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
        if v > MAX_SAFE_INTEGER {
            #[expect(clippy::cast_precision_loss, reason = "the nearest f64, as JavaScript")]
            return self.0.visit_f64(v as f64);
        }
        self.0.visit_u64(v)
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
        if v.unsigned_abs() > MAX_SAFE_INTEGER {
            #[expect(clippy::cast_precision_loss, reason = "the nearest f64, as JavaScript")]
            return self.0.visit_f64(v as f64);
        }
        self.0.visit_i64(v)
    }

    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        self.0.visit_none()
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        self.0.visit_unit()
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        self.0.visit_some(Integral(d))
    }

    fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        self.0.visit_newtype_struct(Integral(d))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        self.0.visit_seq(Integral(seq))
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        self.0.visit_map(Integral(map))
    }

    fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<Self::Value, A::Error> {
        self.0.visit_enum(Integral(data))
    }
}

impl<'de, S: DeserializeSeed<'de>> DeserializeSeed<'de> for Integral<S> {
    type Value = S::Value;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        self.0.deserialize(Integral(d))
    }
}

impl<'de, A: SeqAccess<'de>> SeqAccess<'de> for Integral<A> {
    type Error = A::Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, Self::Error> {
        self.0.next_element_seed(Integral(seed))
    }

    fn size_hint(&self) -> Option<usize> {
        self.0.size_hint()
    }
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for Integral<A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Self::Error> {
        self.0.next_key_seed(Integral(seed))
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(
        &mut self,
        seed: V,
    ) -> Result<V::Value, Self::Error> {
        self.0.next_value_seed(Integral(seed))
    }

    fn size_hint(&self) -> Option<usize> {
        self.0.size_hint()
    }
}

impl<'de, A: EnumAccess<'de>> EnumAccess<'de> for Integral<A> {
    type Error = A::Error;
    type Variant = Integral<A::Variant>;

    fn variant_seed<V: DeserializeSeed<'de>>(
        self,
        seed: V,
    ) -> Result<(V::Value, Self::Variant), Self::Error> {
        let (value, variant) = self.0.variant_seed(Integral(seed))?;
        Ok((value, Integral(variant)))
    }
}

impl<'de, A: VariantAccess<'de>> VariantAccess<'de> for Integral<A> {
    type Error = A::Error;

    fn unit_variant(self) -> Result<(), Self::Error> {
        self.0.unit_variant()
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(
        self,
        seed: T,
    ) -> Result<T::Value, Self::Error> {
        self.0.newtype_variant_seed(Integral(seed))
    }

    fn tuple_variant<V: Visitor<'de>>(
        self,
        len: usize,
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        self.0.tuple_variant(len, Integral(visitor))
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        self.0.struct_variant(fields, Integral(visitor))
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde::Deserialize;
    use serde_json::{Value, json};

    use super::*;
    use crate::authoring::numbers::read_typed;

    /// `text` read from the text and from its tree, which must agree.
    fn both<T: de::DeserializeOwned + PartialEq + fmt::Debug>(text: &str) -> T {
        let from_text: T = from_text(text.as_bytes()).expect("from text");
        let tree: Value = serde_json::from_str(text).expect("JSON");
        let from_tree: T = read_typed(tree).expect("from tree");
        assert_eq!(from_text, from_tree, "{text}");
        from_text
    }

    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(untagged)]
    enum Amount {
        Whole(u64),
        Part(f64),
    }

    #[derive(Debug, Deserialize, PartialEq)]
    enum Shape {
        Circle { radius: u32 },
        Square(u32),
        Pair(u8, i8),
        Dot,
    }

    #[derive(Debug, Deserialize, PartialEq)]
    struct Everything {
        count: u32,
        price: f64,
        below: i64,
        any: Value,
        amounts: Vec<Amount>,
        shapes: Vec<Shape>,
        maybe: Option<u8>,
        map: BTreeMap<String, i16>,
    }

    #[test]
    fn integral_floats_reach_every_kind_of_type_as_integers() {
        let read: Everything = both(
            r#"{"count": 5.00, "price": 2.0, "below": -3e2, "any": [1.0, -0.0, 1.5, {"x": 2e0}],
                "amounts": [3.0, 3.5], "shapes": [{"Circle": {"radius": 1.0}}, {"Square": 2.0},
                {"Pair": [3.0, -4.0]}, "Dot"], "maybe": 7.0, "map": {"a": -1.0}}"#,
        );
        assert_eq!(read.count, 5);
        assert_eq!(read.any, json!([1, 0, 1.5, {"x": 2}]));
        assert_eq!(read.amounts, [Amount::Whole(3), Amount::Part(3.5)]);
    }

    #[test]
    fn other_numbers_stay_as_they_are() {
        let read: Value = both(r#"[1e300, 9007199254740994.0, 18446744073709551616, 0.1]"#);
        assert_eq!(
            read,
            json!([1e300, 9007199254740994.0, 18446744073709551616.0, 0.1])
        );
    }

    #[test]
    fn a_raw_value_is_left_to_the_tree() {
        #[derive(Debug, Deserialize)]
        #[expect(dead_code, reason = "only read")]
        struct Raw {
            raw: Box<serde_json::value::RawValue>,
        }
        assert!(from_text::<Raw>(br#"{"raw": [1,  2]}"#).is_err());
    }

    /// JSON text of every kind of value, integral floats among the numbers
    /// (`2.0`, `-3e2`), written as a client might.
    fn json_text() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        let number = prop_oneof![
            any::<i64>().prop_map(|n| n.to_string()),
            any::<u64>().prop_map(|n| n.to_string()),
            (-1000i32..1000).prop_map(|n| format!("{n}.0")),
            (-50i32..50).prop_map(|n| format!("{n}e2")),
            any::<f64>()
                .prop_filter("finite", |f| f.is_finite())
                .prop_map(|f| format!("{f:?}")),
        ];
        let leaf = prop_oneof![
            Just("null".to_owned()),
            any::<bool>().prop_map(|b| b.to_string()),
            number,
            "[a-c\\u{e9}]{0,3}".prop_map(|s| serde_json::to_string(&s).unwrap_or_default()),
        ];
        leaf.prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..4)
                    .prop_map(|items| format!("[{}]", items.join(", "))),
                proptest::collection::vec(("[a-c]{1,2}", inner), 0..4).prop_map(|members| {
                    let members: Vec<String> = members
                        .iter()
                        .map(|(k, v)| format!("\"{k}\": {v}"))
                        .collect();
                    format!("{{{}}}", members.join(","))
                }),
            ]
        })
    }

    proptest::proptest! {
        /// Any JSON text reads into a `Value` (what `deserialize_any`
        /// sees) exactly as its tree does.
        #[test]
        fn any_text_reads_as_its_tree(text in json_text()) {
            let tree: Value = serde_json::from_str(&text).expect("JSON");
            let from_tree: Value = read_typed(tree).expect("from tree");
            let from_text: Value = from_text(text.as_bytes()).expect("from text");
            proptest::prop_assert_eq!(from_text, from_tree);
        }

        /// What the checked read takes — under a schema that takes every
        /// value, and one that takes some — reads as its tree does; what
        /// it refuses is a repeated key, keys out of order, or a value the
        /// schema refuses.
        #[test]
        fn what_the_checked_read_takes_reads_as_its_tree(text in json_text()) {
            let tree: Value = serde_json::from_str(&text).expect("JSON");
            for schema in [
                serde_json::json!({}),
                serde_json::json!({
                    "type": ["object", "array", "integer", "null"],
                    "items": {"type": ["integer", "string"], "maximum": 100},
                    "additionalProperties": {"not": {"type": "boolean"}}
                }),
            ] {
                let validator = Validator::new(&schema).expect("a schema");
                if let Ok(from_text) = from_text_passing::<Value>(&text, &validator) {
                    proptest::prop_assert!(validator.is_valid(&tree), "{} {}", schema, text);
                    let from_tree: Value = read_typed(tree.clone()).expect("from tree");
                    proptest::prop_assert_eq!(from_text, from_tree);
                }
            }
            // Under `{}`, a text is refused only for its keys.
            let any = Validator::new(&serde_json::json!({})).expect("a schema");
            if from_text_passing::<Value>(&text, &any).is_err() {
                proptest::prop_assert!(text.contains('"'), "{}", text);
            }
        }
    }

    #[test]
    fn trailing_text_is_refused() {
        assert!(from_text::<Value>(b"1 2").is_err());
    }
}
