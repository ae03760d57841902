//! vouch's own writing of JSON values: compact, and every double as its
//! shortest round-trip decimal with ties to even — the decimal it stands
//! for (see [`crate::decimal`]), as JavaScript's and Python's writers print
//! it. serde_json's own writer may print a tie the other way
//! (`710000000000001.25` as `…1.3` where the number checked was `…1.2`), so
//! nothing vouch hands on is written by it.

use std::io;

use serde::Serialize;
use serde_json::ser::{CompactFormatter, Formatter, Serializer};
use serde_json::{Number, Value};

/// Compact JSON whose doubles are written with `ryu`.
#[derive(Clone, Copy, Default)]
struct Shortest;

impl Formatter for Shortest {
    fn write_f64<W: ?Sized + io::Write>(&mut self, writer: &mut W, value: f64) -> io::Result<()> {
        if value.is_finite() {
            writer.write_all(ryu::Buffer::new().format_finite(value).as_bytes())
        } else {
            // serde_json writes what JSON cannot hold as null; so does vouch.
            CompactFormatter.write_null(writer)
        }
    }

    fn write_f32<W: ?Sized + io::Write>(&mut self, writer: &mut W, value: f32) -> io::Result<()> {
        self.write_f64(writer, f64::from(value))
    }
}

/// Indented JSON (two spaces, as serde_json's pretty writer) whose doubles are written with `ryu`.
struct ShortestPretty(serde_json::ser::PrettyFormatter<'static>);

macro_rules! delegate {
    ($($name:ident),*) => {$(
        fn $name<W: ?Sized + io::Write>(&mut self, writer: &mut W) -> io::Result<()> {
            self.0.$name(writer)
        }
    )*};
}

impl Formatter for ShortestPretty {
    delegate!(begin_array, end_array, begin_object, end_object, end_array_value, begin_object_value, end_object_value);

    fn begin_array_value<W: ?Sized + io::Write>(&mut self, writer: &mut W, first: bool) -> io::Result<()> {
        self.0.begin_array_value(writer, first)
    }

    fn begin_object_key<W: ?Sized + io::Write>(&mut self, writer: &mut W, first: bool) -> io::Result<()> {
        self.0.begin_object_key(writer, first)
    }

    fn write_f64<W: ?Sized + io::Write>(&mut self, writer: &mut W, value: f64) -> io::Result<()> {
        Shortest.write_f64(writer, value)
    }

    fn write_f32<W: ?Sized + io::Write>(&mut self, writer: &mut W, value: f32) -> io::Result<()> {
        Shortest.write_f64(writer, f64::from(value))
    }
}

/// [`to_json_string`], indented for people (two spaces).
#[must_use]
pub fn to_json_pretty<T: Serialize + ?Sized>(value: &T) -> String {
    let mut out = Vec::with_capacity(256);
    let mut ser = Serializer::with_formatter(&mut out, ShortestPretty(serde_json::ser::PrettyFormatter::new()));
    if value.serialize(&mut ser).is_err() {
        return String::new();
    }
    String::from_utf8(out).unwrap_or_default()
}

/// Write `value` as compact JSON into `out` (serde_json's writer but for doubles).
pub(crate) fn write_into<W: io::Write, T: Serialize + ?Sized>(out: W, value: &T) -> io::Result<()> {
    let mut ser = Serializer::with_formatter(out, Shortest);
    value.serialize(&mut ser).map_err(io::Error::other)
}

/// `value` as compact JSON, its doubles as the decimals they stand for.
///
/// ```
/// let v: serde_json::Value = serde_json::json!({"x": 710000000000001.2, "n": [1, 0.1]});
/// assert_eq!(vouch::to_json_string(&v), r#"{"x":710000000000001.2,"n":[1,0.1]}"#);
/// ```
#[must_use]
pub fn to_json_string<T: Serialize + ?Sized>(value: &T) -> String {
    let mut out = Vec::with_capacity(128);
    if write_into(&mut out, value).is_err() {
        return String::new();
    }
    String::from_utf8(out).unwrap_or_default()
}

/// A number as vouch writes it.
pub(crate) fn number(n: &Number) -> String {
    match n.as_f64() {
        Some(f) if n.is_f64() && f.is_finite() => ryu::Buffer::new().format_finite(f).to_owned(),
        _ => n.to_string(),
    }
}

/// [`to_json_string`] for a value.
pub(crate) fn value(v: &Value) -> String {
    to_json_string(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ties_are_written_as_the_decimal_checked() {
        let tie: f64 = "710000000000001.2".parse().unwrap_or(0.0);
        assert_eq!(value(&serde_json::json!([tie, 2.0503292286441592e15])), "[710000000000001.2,2050329228644159.2]");
        assert_eq!(number(&Number::from(7)), "7");
        let pretty = serde_json::json!({"a": [tie], "b": {}});
        assert_eq!(
            to_json_pretty(&pretty),
            serde_json::to_string_pretty(&pretty).unwrap_or_default().replace(".3", ".2")
        );
        assert_eq!(value(&serde_json::json!({"a": "é\n", "b": null})), r#"{"a":"é\n","b":null}"#);
    }
}
