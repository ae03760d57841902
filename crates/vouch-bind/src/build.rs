//! A vouched value walked once into a binding's own objects.
//!
//! A binding writes its language's constructors ([`Build`]: `null`, `str`,
//! `list`, `push`…) and nothing that reads JSON. An accepted verdict's value
//! is walked into them by the core ([`Accepted::build`], straight over the
//! vouched text); a value built in the check's own walk, and a plain
//! [`serde_json::Value`], reach them through this module's serde visitor.

use std::fmt;

use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use vouch::{Accepted, HandOverError};

/// A binding's constructors for its language's values: the core's
/// [`vouch::Build`], so its own walk ([`Accepted::build`]) and this module's
/// visitors call the same constructors.
pub use vouch::Build;

/// Walk the accepted value into `builder`'s objects.
///
/// # Errors
/// A constructor's error, placed at the value it was building.
///
/// ```
/// struct Count(usize);
/// impl vouch_bind::Build for Count {
///     type Value = (); type List = (); type Map = (); type Error = String;
///     fn null(&mut self) -> Result<(), String> { self.0 += 1; Ok(()) }
///     fn bool(&mut self, _: bool) -> Result<(), String> { self.0 += 1; Ok(()) }
///     fn i64(&mut self, _: i64) -> Result<(), String> { self.0 += 1; Ok(()) }
///     fn u64(&mut self, _: u64) -> Result<(), String> { self.0 += 1; Ok(()) }
///     fn f64(&mut self, _: f64) -> Result<(), String> { self.0 += 1; Ok(()) }
///     fn str(&mut self, _: &str) -> Result<(), String> { self.0 += 1; Ok(()) }
///     fn key(&mut self, _: &str) -> Result<(), String> { Ok(()) }
///     fn list(&mut self, _: Option<usize>) -> Result<(), String> { Ok(()) }
///     fn push(&mut self, _: &mut (), _: ()) -> Result<(), String> { Ok(()) }
///     fn end_list(&mut self, _: ()) -> Result<(), String> { self.0 += 1; Ok(()) }
///     fn map(&mut self, _: Option<usize>) -> Result<(), String> { Ok(()) }
///     fn insert(&mut self, _: &mut (), _: (), _: ()) -> Result<(), String> { Ok(()) }
///     fn end_map(&mut self, _: ()) -> Result<(), String> { self.0 += 1; Ok(()) }
/// }
/// let contract = vouch::Contract::from_json_str(r#"{"type": "object"}"#)?;
/// let vouch::Verdict::Accepted(accepted) = contract.check(r#"{"a": [1, null, "x"], "b": true}"#) else { unreachable!() };
/// let mut count = Count(0);
/// vouch_bind::build(&accepted, &mut count).map_err(|e| e.message().to_owned())?;
/// assert_eq!(count.0, 6); // the object, the list, 1, null, "x", true
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn build<B: Build>(accepted: &Accepted, builder: &mut B) -> Result<B::Value, HandOverError> {
    accepted.build(builder)
}

/// The reply checked and walked into `builder`'s objects in one walk, when
/// the contract accepts it exactly as sent ([`vouch::Contract::build_as_sent`]):
/// `Some(value)` then, and the verdict is accepted with nothing changed.
/// `None` leaves the reply to the usual way: [`vouch::Contract::check`],
/// then [`build`] on an accepted verdict.
pub fn build_as_sent<B: Build>(contract: &vouch::Contract, text: &str, builder: &mut B) -> Option<B::Value> {
    contract.build_as_sent(text, builder)
}

/// Walk a [`serde_json::Value`] (a repair's before and after, a provider
/// schema) into `builder`'s objects, in the same constructors.
///
/// # Errors
/// A constructor's error.
pub fn build_value<B: Build>(value: &serde_json::Value, builder: &mut B) -> Result<B::Value, String> {
    Seed(builder).deserialize(value).map_err(|e| e.to_string())
}

struct Seed<'b, B>(&'b mut B);

impl<'de, B: Build> DeserializeSeed<'de> for Seed<'_, B> {
    type Value = B::Value;

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<B::Value, D::Error> {
        deserializer.deserialize_any(Walk(self.0))
    }
}

/// An object's key: built with [`Build::key`].
struct KeySeed<'b, B>(&'b mut B);

impl<'de, B: Build> DeserializeSeed<'de> for KeySeed<'_, B> {
    type Value = B::Value;

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<B::Value, D::Error> {
        deserializer.deserialize_str(Key(self.0))
    }
}

struct Key<'b, B>(&'b mut B);

impl<'de, B: Build> Visitor<'de> for Key<'_, B> {
    type Value = B::Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object key")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<B::Value, E> {
        self.0.key(v).map_err(E::custom)
    }
}

struct Walk<'b, B>(&'b mut B);

impl<'de, B: Build> Visitor<'de> for Walk<'_, B> {
    type Value = B::Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_unit<E: de::Error>(self) -> Result<B::Value, E> {
        self.0.null().map_err(E::custom)
    }

    fn visit_none<E: de::Error>(self) -> Result<B::Value, E> {
        self.0.null().map_err(E::custom)
    }

    fn visit_some<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<B::Value, D::Error> {
        deserializer.deserialize_any(self)
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<B::Value, E> {
        self.0.bool(v).map_err(E::custom)
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<B::Value, E> {
        self.0.i64(v).map_err(E::custom)
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<B::Value, E> {
        self.0.u64(v).map_err(E::custom)
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<B::Value, E> {
        self.0.f64(v).map_err(E::custom)
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<B::Value, E> {
        self.0.str(v).map_err(E::custom)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<B::Value, A::Error> {
        let b = self.0;
        let mut list = b.list(seq.size_hint()).map_err(de::Error::custom)?;
        while let Some(item) = seq.next_element_seed(Seed(&mut *b))? {
            b.push(&mut list, item).map_err(de::Error::custom)?;
        }
        b.end_list(list).map_err(de::Error::custom)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<B::Value, A::Error> {
        let b = self.0;
        let mut map = b.map(access.size_hint()).map_err(de::Error::custom)?;
        while let Some(key) = access.next_key_seed(KeySeed(&mut *b))? {
            let value = access.next_value_seed(Seed(&mut *b))?;
            b.insert(&mut map, key, value).map_err(de::Error::custom)?;
        }
        b.end_map(map).map_err(de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    // A test that cannot go on says why (input here is the test's own).
    #![allow(clippy::panic, clippy::indexing_slicing)]
    use super::*;

    /// Builds serde_json's Value: the oracle is serde_json reading `json()`.
    struct Json;

    impl Build for Json {
        type Value = serde_json::Value;
        type List = Vec<serde_json::Value>;
        type Map = serde_json::Map<String, serde_json::Value>;
        type Error = String;
        fn null(&mut self) -> Result<serde_json::Value, String> {
            Ok(serde_json::Value::Null)
        }
        fn bool(&mut self, v: bool) -> Result<serde_json::Value, String> {
            Ok(v.into())
        }
        fn i64(&mut self, v: i64) -> Result<serde_json::Value, String> {
            Ok(v.into())
        }
        fn u64(&mut self, v: u64) -> Result<serde_json::Value, String> {
            Ok(v.into())
        }
        fn f64(&mut self, v: f64) -> Result<serde_json::Value, String> {
            Ok(v.into())
        }
        fn str(&mut self, v: &str) -> Result<serde_json::Value, String> {
            Ok(v.into())
        }
        fn list(&mut self, _: Option<usize>) -> Result<Self::List, String> {
            Ok(Vec::new())
        }
        fn push(&mut self, list: &mut Self::List, item: serde_json::Value) -> Result<(), String> {
            list.push(item);
            Ok(())
        }
        fn end_list(&mut self, list: Self::List) -> Result<serde_json::Value, String> {
            Ok(list.into())
        }
        fn map(&mut self, _: Option<usize>) -> Result<Self::Map, String> {
            Ok(serde_json::Map::new())
        }
        fn insert(
            &mut self,
            map: &mut Self::Map,
            key: serde_json::Value,
            value: serde_json::Value,
        ) -> Result<(), String> {
            let serde_json::Value::String(key) = key else { return Err("a key that is not a string".into()) };
            map.insert(key, value);
            Ok(())
        }
        fn end_map(&mut self, map: Self::Map) -> Result<serde_json::Value, String> {
            Ok(map.into())
        }
    }

    #[test]
    fn the_walk_builds_what_vouch_checked_in_order_with_repairs() {
        let Ok(contract) = vouch::Contract::from_json_str(
            r#"{"type": "object", "x-vouch": {"allow": ["big_integers"]}, "properties": {"score": {"type": "integer", "x-vouch": {"repair": ["coerce"]}},
               "tags": {"type": "array"}, "nested": {"type": "object"}}}"#,
        ) else {
            panic!("no contract")
        };
        for raw in [
            r#"{"score": "80", "tags": ["a\nb", "\u00e9", 1.5e3, -7, 18446744073709551615, -9223372036854775808, null, false], "nested": {"z": 1, "a": {}}}"#,
            r#"{"score": 3}"#,
            r#"{"b": 1, "a": 2, "c": [[[]]]}"#,
            r#"{"big": 1e300, "small": -0.0, "exact": 9007199254740993, "neg": -9223372036854775807}"#,
        ] {
            let vouch::Verdict::Accepted(a) = contract.check(raw) else { panic!("refused: {raw}") };
            let Ok(built) = build(&a, &mut Json) else { panic!("walk failed: {raw}") };
            assert_eq!(&built, a.value(), "{raw}");
            let order = |v: &serde_json::Value| v.as_object().map(|o| o.keys().cloned().collect::<Vec<_>>());
            assert_eq!(order(&built), order(a.value()), "{raw}");
        }
    }

    #[test]
    fn one_walk_builds_what_the_check_and_the_walk_build_or_leaves_the_reply() {
        let Ok(contract) = vouch::Contract::from_json_str(
            r#"{"type": "object", "properties": {"score": {"type": "integer", "maximum": 100},
               "tags": {"type": "array", "items": {"type": "string"}}, "nested": {"type": "object"}},
               "required": ["score"], "additionalProperties": false}"#,
        ) else {
            panic!("no contract")
        };
        for raw in [
            r#"{"score": 80}"#,
            " {\"score\": 0, \"tags\": [\"a\\nb\", \"\\u00e9\", \"\\ud83d\\ude00\"]}\n",
            r#"{"tags": [], "score": -3}"#,
        ] {
            let vouch::Verdict::Accepted(a) = contract.check(raw) else { panic!("refused: {raw}") };
            let Some(walked) = build_as_sent(&contract, raw, &mut Json) else { panic!("not walked: {raw}") };
            assert_eq!(Ok(&walked), build(&a, &mut Json).as_ref().map_err(|e| e.message().to_owned()), "{raw}");
        }
        // An object its node reads whole (no declared members) is left to the check: accepted all the same.
        let raw = r#"{"score": 1, "nested": {"z": [1, {}], "a": null}}"#;
        assert!(contract.check(raw).is_accepted());
        assert_eq!(build_as_sent(&contract, raw, &mut Json), None);
        // Refused, or anything the one walk cannot decide, is left to the check.
        for raw in [
            r#"{"score": 142}"#,
            r#"{"score": "80"}"#,
            "{}",
            r#"{"score": 1, "score": 1}"#,
            r#"{"score": 1, "x": 1}"#,
            r#"{"score": 8"#,
            "[]",
            "",
        ] {
            assert_eq!(build_as_sent(&contract, raw, &mut Json), None, "{raw}");
        }
        // A contract with a repair is never walked once: the repair needs the whole verdict.
        let Ok(repairing) = vouch::Contract::from_json_str(
            r#"{"type": "object", "properties": {"score": {"type": "integer", "x-vouch": {"repair": ["coerce"]}}}}"#,
        ) else {
            panic!("no contract")
        };
        assert_eq!(build_as_sent(&repairing, r#"{"score": 80}"#, &mut Json), None);
    }

    #[test]
    fn a_constructor_s_error_stops_the_walk_and_is_placed() {
        struct NoStrings;
        impl Build for NoStrings {
            type Value = ();
            type List = ();
            type Map = ();
            type Error = &'static str;
            fn null(&mut self) -> Result<(), &'static str> {
                Ok(())
            }
            fn bool(&mut self, _: bool) -> Result<(), &'static str> {
                Ok(())
            }
            fn i64(&mut self, _: i64) -> Result<(), &'static str> {
                Ok(())
            }
            fn u64(&mut self, _: u64) -> Result<(), &'static str> {
                Ok(())
            }
            fn f64(&mut self, _: f64) -> Result<(), &'static str> {
                Ok(())
            }
            fn str(&mut self, _: &str) -> Result<(), &'static str> {
                Err("no strings here")
            }
            fn key(&mut self, _: &str) -> Result<(), &'static str> {
                Ok(())
            }
            fn list(&mut self, _: Option<usize>) -> Result<(), &'static str> {
                Ok(())
            }
            fn push(&mut self, _: &mut (), _: ()) -> Result<(), &'static str> {
                Ok(())
            }
            fn end_list(&mut self, _: ()) -> Result<(), &'static str> {
                Ok(())
            }
            fn map(&mut self, _: Option<usize>) -> Result<(), &'static str> {
                Ok(())
            }
            fn insert(&mut self, _: &mut (), _: (), _: ()) -> Result<(), &'static str> {
                Ok(())
            }
            fn end_map(&mut self, _: ()) -> Result<(), &'static str> {
                Ok(())
            }
        }
        let Ok(contract) = vouch::Contract::from_json_str("{}") else { panic!("no contract") };
        let vouch::Verdict::Accepted(a) = contract.check(r#"{"a": [1, 2, "x"]}"#) else { panic!("refused") };
        let Err(e) = build(&a, &mut NoStrings) else { panic!("built") };
        assert!(e.message().contains("no strings here"), "{}", e.message());
        assert_eq!(e.path(), "/a/2");
    }
}
