//! The two kinds of wire list, as enums: closed (the schema lists every
//! value) and open (built-in values, and `Other` for any other non-empty
//! name). See [`crate::vocab`] for what each kind means.

/// `Display` and `Serialize` for a list whose values spell themselves with
/// `as_str`.
macro_rules! spelt_as_str {
    ($name:ident) => {
        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl ::serde::Serialize for $name {
            fn serialize<S: ::serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(self.as_str())
            }
        }
    };
}

/// Declares a closed list: its variants and their wire spelling.
macro_rules! closed_set {
    (
        $(#[$meta:meta])*
        $name:ident { $( $(#[$vmeta:meta])* $variant:ident = $wire:literal, )+ }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum $name {
            $( $(#[$vmeta])* $variant, )+
        }

        impl $name {
            /// Every value, in the schema's order.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// The value as the wire spells it.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $wire,)+
                }
            }

            /// The value spelt `wire`, if the list has it.
            pub fn parse(wire: &str) -> Option<Self> {
                match wire {
                    $($wire => Some($name::$variant),)+
                    _ => None,
                }
            }
        }

        spelt_as_str!($name);

        impl<'de> ::serde::Deserialize<'de> for $name {
            fn deserialize<D: ::serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let wire = <String as ::serde::Deserialize>::deserialize(deserializer)?;
                Self::parse(&wire).ok_or_else(|| {
                    <D::Error as ::serde::de::Error>::custom(format!(
                        "unknown {} {wire:?}: one of {}",
                        stringify!($name),
                        $crate::vocab::spelled(Self::ALL.iter().map(|v| v.as_str()))
                    ))
                })
            }
        }
    };
}

/// Declares an open list: its built-in variants, their wire spelling, and
/// `Other` for any other non-empty name.
macro_rules! open_set {
    (
        $(#[$meta:meta])*
        $name:ident { $( $(#[$vmeta:meta])* $variant:ident = $wire:literal, )+ }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum $name {
            $( $(#[$vmeta])* $variant, )+
            /// A value this crate doesn't know yet (a newer version of the
            /// protocol's, or an adapter's): made with `other` or read from
            /// the wire, never a built-in value's spelling.
            Other($crate::vocab::OtherName),
        }

        impl $name {
            /// The built-in values, in the schema's order.
            pub const BUILT_IN: &'static [$name] = &[$($name::$variant),+];

            /// A value the built-in list doesn't have. A built-in's spelling
            /// gives that variant (`OnViolation::other("halt")` is `Halt`);
            /// an empty name stays `Other("")`, which the indexer refuses
            /// and no reader accepts.
            pub fn other(name: impl Into<String>) -> Self {
                let name = name.into();
                match Self::built_in(&name) {
                    Some(known) => known,
                    None => $name::Other($crate::vocab::OtherName(name)),
                }
            }

            /// The value as the wire spells it.
            pub fn as_str(&self) -> &str {
                match self {
                    $($name::$variant => $wire,)+
                    $name::Other(name) => &name.0,
                }
            }

            /// The value spelt `wire`: a built-in's variant, else `Other`;
            /// `None` for an empty name.
            pub fn parse(wire: &str) -> Option<Self> {
                (!wire.is_empty()).then(|| Self::other(wire))
            }

            /// The spelling of a built-in value; `None` for `Other`.
            pub fn built_in_str(&self) -> Option<&'static str> {
                match self {
                    $($name::$variant => Some($wire),)+
                    $name::Other(_) => None,
                }
            }

            /// The built-in value spelt `wire`, if there is one.
            pub fn built_in(wire: &str) -> Option<Self> {
                match wire {
                    $($wire => Some($name::$variant),)+
                    _ => None,
                }
            }

            /// The built-in values' spellings, for messages: `"a", "b" or "c"`.
            pub fn built_in_names() -> String {
                $crate::vocab::spelled(Self::BUILT_IN.iter().map(|v| v.as_str()))
            }
        }

        spelt_as_str!($name);

        impl<'de> ::serde::Deserialize<'de> for $name {
            fn deserialize<D: ::serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let wire = <String as ::serde::Deserialize>::deserialize(deserializer)?;
                Self::parse(&wire).ok_or_else(|| {
                    <D::Error as ::serde::de::Error>::custom(concat!("an empty ", stringify!($name)))
                })
            }
        }
    };
}
