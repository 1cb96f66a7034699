//! The screen and a typed read in one pass: a deserializer wrapped so that
//! every value the reader's type takes is checked as it goes by, and every
//! value the type skips is walked by the screen itself, for
//! `Validator::deserialize_passing`.
//!
//! The checks are the walk's own ([`Walk`], [`MapCheck`], [`SeqCheck`]):
//! a read that ends well saw every value of the text checked, so it passes
//! exactly the texts the screen passes. Where a value reaches the type in
//! a shape the checks can't follow (bytes, a 128-bit integer, an enum
//! written as an object, a `RawValue`), the read stops: not passed.

use std::borrow::Cow;
use std::fmt;

use serde::de::value::{BorrowedStrDeserializer, StrDeserializer};
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

use super::number::Num;
use super::walk::{MapCheck, SeqCheck, Stop, Walk, stop};

/// The name serde_json gives the newtype its `RawValue` reads through.
const RAW_VALUE_TOKEN: &str = "$serde_json::private::RawValue";

/// A deserializer, visitor or seed whose values are checked by `walk`.
pub(super) struct Checked<'p, X> {
    pub(super) walk: Walk<'p>,
    pub(super) inner: X,
}

impl<'p, X> Checked<'p, X> {
    /// The wrapped value, and `next` checked by the same walk.
    fn split<Y>(self, next: Y) -> (X, Checked<'p, Y>) {
        (
            self.inner,
            Checked {
                walk: self.walk,
                inner: next,
            },
        )
    }
}

/// `deserialize_*` methods that hand the wrapped deserializer the visitor
/// as `split` wraps it: for [`Checked`] and [`KeySeed`] alike.
macro_rules! forward_deserialize {
    ($($method:ident($($arg:ident: $ty:ty),*))*) => {$(
        fn $method<V: Visitor<'de>>(
            self,
            $($arg: $ty,)*
            visitor: V,
        ) -> Result<V::Value, D::Error> {
            let (inner, visitor) = self.split(visitor);
            inner.$method($($arg,)* visitor)
        }
    )*};
}

macro_rules! refused_deserialize {
    ($($method:ident)*) => {$(
        fn $method<V: Visitor<'de>>(self, _visitor: V) -> Result<V::Value, D::Error> {
            Err(stop(Stop))
        }
    )*};
}

impl<'de, D: Deserializer<'de>> Deserializer<'de> for Checked<'_, D> {
    type Error = D::Error;

    forward_deserialize! {
        deserialize_any() deserialize_bool()
        deserialize_i8() deserialize_i16() deserialize_i32() deserialize_i64()
        deserialize_u8() deserialize_u16() deserialize_u32() deserialize_u64()
        deserialize_f64() deserialize_char()
        deserialize_str() deserialize_string() deserialize_option() deserialize_unit()
        deserialize_seq() deserialize_map() deserialize_identifier()
        deserialize_unit_struct(name: &'static str)
        deserialize_tuple(len: usize)
        deserialize_tuple_struct(name: &'static str, len: usize)
        deserialize_struct(name: &'static str, fields: &'static [&'static str])
    }

    /// Read as an `f64`, as the tree has the number: serde_json reads an
    /// `f32` straight from its text, rounded to `f32` before the schema
    /// would see it (so `3.4028235e38`, past `f32::MAX`, would pass its
    /// `maximum` here and fail it on the tree). The type's visitor then
    /// narrows the `f64` itself, as it does from the tree.
    fn deserialize_f32<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        let (inner, visitor) = self.split(visitor);
        inner.deserialize_f64(visitor)
    }

    // Bytes and 128-bit integers reach the type unlike the screen's values.
    refused_deserialize! {
        deserialize_bytes deserialize_byte_buf deserialize_i128 deserialize_u128
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        // What the type skips the screen walks.
        self.inner.deserialize_any(self.walk)?;
        visitor.visit_unit()
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        if name == RAW_VALUE_TOKEN {
            return Err(stop(Stop));
        }
        let (inner, visitor) = self.split(visitor);
        inner.deserialize_newtype_struct(name, visitor)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        // Read as any value, so that a variant written as a string is
        // checked as the string it is.
        let (inner, visitor) = self.split(visitor);
        inner.deserialize_any(UnitVariant(visitor))
    }

    fn is_human_readable(&self) -> bool {
        self.inner.is_human_readable()
    }
}

impl<'de, S: DeserializeSeed<'de>> DeserializeSeed<'de> for Checked<'_, S> {
    type Value = S::Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<S::Value, D::Error> {
        let (seed, deserializer) = self.split(deserializer);
        seed.deserialize(deserializer)
    }
}

/// Checks a value with `check`, then hands it on with `then`.
fn checked<T, E: de::Error>(
    check: Result<(), Stop>,
    then: impl FnOnce() -> Result<T, E>,
) -> Result<T, E> {
    check.map_err(stop)?;
    then()
}

impl<'de, V: Visitor<'de>> Visitor<'de> for Checked<'_, V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.inner.expecting(f)
    }

    fn visit_unit<E: de::Error>(self) -> Result<V::Value, E> {
        checked(self.walk.null(), || self.inner.visit_unit())
    }

    fn visit_none<E: de::Error>(self) -> Result<V::Value, E> {
        checked(self.walk.null(), || self.inner.visit_none())
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<V::Value, D::Error> {
        let (visitor, deserializer) = self.split(deserializer);
        visitor.visit_some(deserializer)
    }

    fn visit_newtype_struct<D: Deserializer<'de>>(
        self,
        deserializer: D,
    ) -> Result<V::Value, D::Error> {
        let (visitor, deserializer) = self.split(deserializer);
        visitor.visit_newtype_struct(deserializer)
    }

    fn visit_bool<E: de::Error>(self, b: bool) -> Result<V::Value, E> {
        checked(self.walk.boolean(b), || self.inner.visit_bool(b))
    }

    fn visit_u64<E: de::Error>(self, n: u64) -> Result<V::Value, E> {
        checked(self.walk.number(Num::Unsigned(n)), || {
            self.inner.visit_u64(n)
        })
    }

    fn visit_i64<E: de::Error>(self, n: i64) -> Result<V::Value, E> {
        checked(self.walk.number(Num::Signed(n)), || self.inner.visit_i64(n))
    }

    fn visit_f64<E: de::Error>(self, f: f64) -> Result<V::Value, E> {
        checked(self.walk.number(Num::Float(f)), || self.inner.visit_f64(f))
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<V::Value, E> {
        checked(self.walk.string(s), || self.inner.visit_str(s))
    }

    fn visit_borrowed_str<E: de::Error>(self, s: &'de str) -> Result<V::Value, E> {
        checked(self.walk.string(s), || self.inner.visit_borrowed_str(s))
    }

    fn visit_string<E: de::Error>(self, s: String) -> Result<V::Value, E> {
        checked(self.walk.string(&s), || self.inner.visit_string(s))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<V::Value, A::Error> {
        let mut check = SeqCheck::new(self.walk).map_err(stop)?;
        let items = CheckedSeq {
            check: &mut check,
            inner: seq,
        };
        let value = self.inner.visit_seq(items)?;
        // Again, for a type that stops at its last item (a tuple): the
        // deserializer refuses any item left unread.
        check.end().map_err(stop)?;
        Ok(value)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<V::Value, A::Error> {
        let mut check = MapCheck::new(self.walk).map_err(stop)?;
        let entries = CheckedMap {
            check: &mut check,
            inner: map,
            value: None,
        };
        let value = self.inner.visit_map(entries)?;
        check.end()?;
        Ok(value)
    }
}

/// An array's items, each checked, and its end.
struct CheckedSeq<'a, 'p, A> {
    check: &'a mut SeqCheck<'p>,
    inner: A,
}

impl<'de, A: SeqAccess<'de>> SeqAccess<'de> for CheckedSeq<'_, '_, A> {
    type Error = A::Error;

    fn next_element_seed<S: DeserializeSeed<'de>>(
        &mut self,
        seed: S,
    ) -> Result<Option<S::Value>, A::Error> {
        let walk = self.check.items();
        match self
            .inner
            .next_element_seed(Checked { walk, inner: seed })?
        {
            Some(item) => {
                self.check.counted();
                Ok(Some(item))
            }
            None => {
                self.check.end().map_err(stop)?;
                Ok(None)
            }
        }
    }

    fn size_hint(&self) -> Option<usize> {
        self.inner.size_hint()
    }
}

/// An object's entries, each key and value checked, and its end.
struct CheckedMap<'a, 'p, 'de, A> {
    check: &'a mut MapCheck<'p, 'de>,
    inner: A,
    /// The walk for the value of the key just read.
    value: Option<Walk<'p>>,
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for CheckedMap<'_, '_, 'de, A> {
    type Error = A::Error;

    fn next_key_seed<S: DeserializeSeed<'de>>(
        &mut self,
        seed: S,
    ) -> Result<Option<S::Value>, A::Error> {
        let mut key = None;
        let read = self.inner.next_key_seed(KeySeed {
            inner: seed,
            key: &mut key,
        })?;
        match read {
            Some(read) => {
                let key = key.ok_or_else(|| stop(Stop))?;
                self.value = Some(self.check.key(key).map_err(stop)?);
                Ok(Some(read))
            }
            None => {
                self.check.end()?;
                Ok(None)
            }
        }
    }

    fn next_value_seed<S: DeserializeSeed<'de>>(&mut self, seed: S) -> Result<S::Value, A::Error> {
        let walk = self.value.take().ok_or_else(|| stop(Stop))?;
        self.inner.next_value_seed(Checked { walk, inner: seed })
    }

    fn size_hint(&self) -> Option<usize> {
        self.inner.size_hint()
    }
}

/// A key's seed that keeps the key as the type reads it.
struct KeySeed<'k, 'de, X> {
    inner: X,
    key: &'k mut Option<Cow<'de, str>>,
}

impl<'k, 'de, X> KeySeed<'k, 'de, X> {
    /// The wrapped deserializer, and `visitor` keeping the key.
    fn split<V>(self, visitor: V) -> (X, KeySeed<'k, 'de, V>) {
        (
            self.inner,
            KeySeed {
                inner: visitor,
                key: self.key,
            },
        )
    }
}

impl<'de, S: DeserializeSeed<'de>> DeserializeSeed<'de> for KeySeed<'_, 'de, S> {
    type Value = S::Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<S::Value, D::Error> {
        self.inner.deserialize(KeySeed {
            inner: deserializer,
            key: self.key,
        })
    }
}

impl<'de, D: Deserializer<'de>> Deserializer<'de> for KeySeed<'_, 'de, D> {
    type Error = D::Error;

    forward_deserialize! {
        deserialize_any() deserialize_bool()
        deserialize_i8() deserialize_i16() deserialize_i32() deserialize_i64() deserialize_i128()
        deserialize_u8() deserialize_u16() deserialize_u32() deserialize_u64() deserialize_u128()
        deserialize_f32() deserialize_f64() deserialize_char()
        deserialize_str() deserialize_string() deserialize_bytes() deserialize_byte_buf()
        deserialize_option() deserialize_unit() deserialize_seq() deserialize_map()
        deserialize_identifier() deserialize_ignored_any()
        deserialize_unit_struct(name: &'static str)
        deserialize_newtype_struct(name: &'static str)
        deserialize_tuple(len: usize)
        deserialize_tuple_struct(name: &'static str, len: usize)
        deserialize_struct(name: &'static str, fields: &'static [&'static str])
        deserialize_enum(name: &'static str, variants: &'static [&'static str])
    }

    fn is_human_readable(&self) -> bool {
        self.inner.is_human_readable()
    }
}

/// Keeps a key that reaches the type as a string; a key read any other
/// way (a number, a `bool`) leaves none, and the read stops.
impl<'de, V: Visitor<'de>> Visitor<'de> for KeySeed<'_, 'de, V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.inner.expecting(f)
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<V::Value, E> {
        *self.key = Some(Cow::Owned(s.to_owned()));
        self.inner.visit_str(s)
    }

    fn visit_borrowed_str<E: de::Error>(self, s: &'de str) -> Result<V::Value, E> {
        *self.key = Some(Cow::Borrowed(s));
        self.inner.visit_borrowed_str(s)
    }

    fn visit_string<E: de::Error>(self, s: String) -> Result<V::Value, E> {
        *self.key = Some(Cow::Owned(s.clone()));
        self.inner.visit_string(s)
    }
}

/// An enum read as any value: a variant written as a string is checked as
/// a string, then given to the type as its variant. Any other shape (a
/// variant with content, written as an object) stops the read.
struct UnitVariant<'p, V>(Checked<'p, V>);

impl<'de, V: Visitor<'de>> Visitor<'de> for UnitVariant<'_, V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.inner.expecting(f)
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<V::Value, E> {
        let Checked { walk, inner } = self.0;
        checked(walk.string(s), || {
            inner.visit_enum(StrDeserializer::<E>::new(s))
        })
    }

    fn visit_borrowed_str<E: de::Error>(self, s: &'de str) -> Result<V::Value, E> {
        let Checked { walk, inner } = self.0;
        checked(walk.string(s), || {
            inner.visit_enum(BorrowedStrDeserializer::<E>::new(s))
        })
    }
}
