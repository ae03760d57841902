//! Typed contracts for Rust users: a contract from a type deriving
//! `schemars::JsonSchema`, and checks that hand back that type.

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::{CompileError, Contract};
use crate::guided::Guide;
use crate::problem::{Finding, Problem, ProblemCode, Repair};
use crate::read::parser::Integers;
use crate::verdict::{Refused, Verdict};

/// An accepted reply, deserialized into the application's type.
#[derive(Debug, Clone, PartialEq)]
pub struct Vouched<T> {
    /// The value, typed.
    pub value: T,
    /// Every declared repair that changed the reply.
    pub repairs: Vec<Repair>,
    /// Gate findings on the accepted value.
    pub findings: Vec<Finding>,
}

/// schemars' integer formats, as the ranges they mean. vouch asserts
/// `format`, so each becomes bounds rather than an unknown format.
fn integer_range(format: &str) -> Option<(i128, i128)> {
    Some(match format {
        "int8" => (i128::from(i8::MIN), i128::from(i8::MAX)),
        "int16" => (i128::from(i16::MIN), i128::from(i16::MAX)),
        "int32" => (i128::from(i32::MIN), i128::from(i32::MAX)),
        "uint8" => (0, i128::from(u8::MAX)),
        "uint16" => (0, i128::from(u16::MAX)),
        "uint32" => (0, i128::from(u32::MAX)),
        // isize/usize, and 128-bit integers narrowed to 64 bits: stricter, never looser.
        "int64" | "int" | "int128" => (i128::from(i64::MIN), i128::from(i64::MAX)),
        "uint64" | "uint" | "uint128" => (0, i128::from(u64::MAX)),
        _ => return None,
    })
}

/// Rewrite what schemars emits for Rust numeric types into constraints vouch
/// enforces: integer formats become `minimum`/`maximum` (tightening, never
/// loosening, what the author wrote); float formats carry no constraint.
fn normalize(schema: &mut Value) {
    let mut stack = vec![schema];
    while let Some(v) = stack.pop() {
        match v {
            Value::Object(map) => {
                let format = map.get("format").and_then(Value::as_str).map(str::to_owned);
                if let Some(f) = format {
                    if let Some((lo, hi)) = integer_range(&f) {
                        map.remove("format");
                        let lo_ok = map.get("minimum").and_then(Value::as_f64).is_some_and(|m| m >= lo as f64);
                        if !lo_ok {
                            map.insert("minimum".into(), number(lo));
                        }
                        let hi_ok = map.get("maximum").and_then(Value::as_f64).is_some_and(|m| m <= hi as f64);
                        if !hi_ok {
                            map.insert("maximum".into(), number(hi));
                        }
                    } else if f == "float" || f == "double" {
                        map.remove("format");
                    }
                }
                stack.extend(map.values_mut());
            }
            Value::Array(items) => stack.extend(items.iter_mut()),
            _ => {}
        }
    }
}

fn number(n: i128) -> Value {
    i64::try_from(n).map(Value::from).or_else(|_| u64::try_from(n).map(Value::from)).unwrap_or(Value::Null)
}

impl Contract {
    /// A contract from a Rust type deriving [`schemars::JsonSchema`]
    /// (schemars 1.x, draft 2020-12). Policy goes in through schemars'
    /// `extend` attribute: `#[schemars(extend("x-vouch" = {...}))]`.
    ///
    /// ```
    /// use schemars::JsonSchema;
    /// use serde::Deserialize;
    ///
    /// #[derive(Deserialize, JsonSchema)]
    /// #[serde(deny_unknown_fields, rename_all = "camelCase")]
    /// struct Plate { product_present: bool }
    ///
    /// let contract = vouch::Contract::of::<Plate>()?;
    /// let plate = contract.check_as::<Plate>(r#"{"productPresent": false}"#).map_err(|r| r.problems[0].message.clone());
    /// assert_eq!(plate.map(|v| v.value.product_present), Ok(false));
    /// # Ok::<(), vouch::CompileError>(())
    /// ```
    ///
    /// # Errors
    /// When the generated schema does not compile (for example a `format`
    /// vouch cannot assert).
    pub fn of<T: JsonSchema>() -> Result<Self, CompileError> {
        let generator = schemars::generate::SchemaSettings::draft2020_12().into_generator();
        let mut schema = generator.into_root_schema_for::<T>().to_value();
        normalize(&mut schema);
        Self::from_value(schema)
    }

    /// Check a raw reply and deserialize the accepted value into `T`,
    /// straight from the vouched text ([`Accepted::deserialize`]: no `Value`
    /// in between; integers as `u64`/`i64`, decimals as the correctly
    /// rounded double, exactly the numbers vouch checked).
    ///
    /// [`Accepted::deserialize`]: crate::Accepted::deserialize
    ///
    /// # Errors
    /// The refusal, when the reply is refused, or when the accepted value
    /// does not deserialize into `T` (the contract and the type disagree:
    /// refused with code `wrong_type` at the path of what did not fit,
    /// failing closed).
    pub fn check_as<T: DeserializeOwned>(&self, raw: impl AsRef<[u8]>) -> Result<Vouched<T>, Refused> {
        let raw = raw.as_ref();
        // The text read as UTF-8 once, for the one walk and, should it give up, the check.
        let verdict = match (raw.len() <= self.limits.max_bytes).then(|| std::str::from_utf8(raw)) {
            Some(Ok(text)) => {
                if let Some(value) = self.guided(text) {
                    return Ok(Vouched { value, repairs: Vec::new(), findings: Vec::new() });
                }
                self.check_str(text)
            }
            _ => self.check(raw),
        };
        match verdict {
            Verdict::Refused(r) => Err(r),
            Verdict::Accepted(a) => match a.deserialize::<T>() {
                Ok(value) => Ok(Vouched { value, repairs: a.repairs, findings: a.findings }),
                Err(e) => Err(Refused {
                    problems: vec![Problem::new(
                        ProblemCode::WrongType,
                        e.path(),
                        std::any::type_name::<T>().to_owned(),
                        crate::problem::excerpt(a.value().pointer(e.path()).unwrap_or(a.value())),
                        &format!(
                            "the accepted value does not fit the type {}: {}",
                            std::any::type_name::<T>(),
                            e.message()
                        ),
                    )],
                }),
            },
        }
    }

    /// The reply checked and its value walked into `seed` in one walk, for
    /// a binding that builds its own objects ([`Accepted::deserialize_seed`]'s
    /// seeds): `Some(value)` when the reply is accepted exactly as sent —
    /// no repair, no finding, [`Contract::check`] would give an accepted
    /// verdict with nothing changed, and `value` is what `seed` built from
    /// the vouched text. `None` when the one walk leaves the reply to the
    /// usual way (a contract with repairs, findings or unwrapping, anything
    /// the walk cannot decide outright, any refusal, or an error of `seed`):
    /// then [`Contract::check_str`] gives the verdict, and
    /// [`Accepted::deserialize_seed`] the value. `None` says nothing about
    /// the reply; only the check does.
    ///
    /// [`Accepted::deserialize_seed`]: crate::Accepted::deserialize_seed
    ///
    /// ```
    /// let contract = vouch::Contract::from_json_str(
    ///     r#"{"type": "object", "properties": {"score": {"type": "integer", "maximum": 100}}, "required": ["score"]}"#,
    /// )?;
    /// let seed = std::marker::PhantomData::<serde_json::Value>;
    /// assert_eq!(contract.accepted_as_sent(r#"{"score": 80}"#, seed), Some(serde_json::json!({"score": 80})));
    /// assert_eq!(contract.accepted_as_sent(r#"{"score": 142}"#, seed), None); // the check refuses it
    /// # Ok::<(), vouch::CompileError>(())
    /// ```
    pub fn accepted_as_sent<'de, S: serde::de::DeserializeSeed<'de>>(
        &self,
        text: &'de str,
        seed: S,
    ) -> Option<S::Value> {
        self.as_sent_guide(text)?.deserialize_seed(text, self.root, self.limits.max_depth, seed)
    }

    /// The reply checked and walked into `builder`'s objects in one walk,
    /// where the contract accepts it exactly as sent, as
    /// [`Contract::accepted_as_sent`] decides it (the same checks, without
    /// serde's visitors between): `Some(value)` then, and the verdict is
    /// accepted with nothing changed. `None` leaves the reply to the usual
    /// way: [`Contract::check`], then [`Accepted::build`](crate::Accepted::build)
    /// on an accepted verdict. What the Python binding builds its values
    /// with.
    ///
    /// ```
    /// # use vouch::Build;
    /// # struct Count;
    /// # impl Build for Count {
    /// #     type Value = usize; type List = usize; type Map = usize; type Error = String;
    /// #     fn null(&mut self) -> Result<usize, String> { Ok(1) }
    /// #     fn bool(&mut self, _: bool) -> Result<usize, String> { Ok(1) }
    /// #     fn i64(&mut self, _: i64) -> Result<usize, String> { Ok(1) }
    /// #     fn u64(&mut self, _: u64) -> Result<usize, String> { Ok(1) }
    /// #     fn f64(&mut self, _: f64) -> Result<usize, String> { Ok(1) }
    /// #     fn str(&mut self, _: &str) -> Result<usize, String> { Ok(1) }
    /// #     fn list(&mut self, _: Option<usize>) -> Result<usize, String> { Ok(1) }
    /// #     fn push(&mut self, l: &mut usize, v: usize) -> Result<(), String> { *l += v; Ok(()) }
    /// #     fn end_list(&mut self, l: usize) -> Result<usize, String> { Ok(l) }
    /// #     fn map(&mut self, _: Option<usize>) -> Result<usize, String> { Ok(1) }
    /// #     fn insert(&mut self, m: &mut usize, _: usize, v: usize) -> Result<(), String> { *m += v; Ok(()) }
    /// #     fn end_map(&mut self, m: usize) -> Result<usize, String> { Ok(m) }
    /// # }
    /// // `Count` builds each value as the number of values in it.
    /// let contract = vouch::Contract::from_json_str(r#"{"type": "array", "items": {"type": "integer", "maximum": 100}}"#)?;
    /// assert_eq!(contract.build_as_sent("[1, 2, 3]", &mut Count), Some(4));
    /// assert_eq!(contract.build_as_sent("[1, 2, 142]", &mut Count), None); // the check refuses it
    /// # Ok::<(), vouch::CompileError>(())
    /// ```
    pub fn build_as_sent<B: crate::Build>(&self, text: &str, builder: &mut B) -> Option<B::Value> {
        self.as_sent_guide(text)?.build(text, self.root, self.limits.max_depth, builder)
    }

    /// What guides the one walk over `text`, or `None` where the walk
    /// cannot take it: a contract with repairs, findings or unwrapping (they
    /// need the whole verdict), a reply over the size limit, or one whose
    /// last character (white space aside) cannot end JSON: a reply cut off
    /// is refused only at its end, after the walk built its value up to
    /// there, for nothing.
    fn as_sent_guide(&self, text: &str) -> Option<Guide<'_>> {
        if self.repairs || self.findings || !self.unwrap.is_none() || text.len() > self.limits.max_bytes {
            return None;
        }
        let last = text.trim_end_matches(crate::verdict::is_json_ws).as_bytes().last();
        if !matches!(last, Some(b'}' | b']' | b'"' | b'0'..=b'9' | b'e' | b'l')) {
            return None;
        }
        Some(Guide { nodes: &self.nodes, plans: &self.plans, wide_integers: self.integers != Integers::AsDoubles })
    }

    /// Test hook, not API: what the one-walk path of
    /// [`Contract::check_as`] gives alone (`None`: it left the reply to
    /// the usual way), for the tests that hold it to the usual way's
    /// verdict. It may change or go away in any release.
    #[doc(hidden)]
    pub fn __check_as_in_one_walk<T: DeserializeOwned>(&self, raw: impl AsRef<[u8]>) -> Option<T> {
        let raw = raw.as_ref();
        if raw.len() > self.limits.max_bytes {
            return None;
        }
        self.guided(std::str::from_utf8(raw).ok()?)
    }

    /// `T` checked and built in one walk ([`crate::guided`]), where the
    /// contract asks for no repair, finding or unwrapping and the walk
    /// decides the reply outright; `None` leaves it to the usual way.
    fn guided<T: DeserializeOwned>(&self, text: &str) -> Option<T> {
        self.accepted_as_sent(text, std::marker::PhantomData)
    }
}
