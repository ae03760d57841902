//! `format`: string formats the contract asserts.
//!
//! JSON Schema 2020-12 treats `format` as an annotation by default. vouch is
//! fail-closed, so every format it knows is an assertion: a string that is not
//! in the format is refused, and a contract naming a format vouch does not know
//! is refused when it is compiled rather than silently passing everything.
//!
//! Each format follows the reference the 2020-12 validation spec gives for it,
//! read the way the JSON-Schema-Test-Suite `optional/format` tests read it:
//!
//! - `date`, `time`, `date-time`: RFC 3339 section 5.6 `full-date`,
//!   `full-time` and `date-time`, with real month lengths and leap years. The
//!   offset is required.
//! - `duration`: RFC 3339 Appendix A.
//! - `email`: the RFC 5321 `Mailbox` (dot-atom or quoted local part; a
//!   hostname or an `[IPv4]` / `[IPv6:...]` address literal as the domain).
//! - `hostname`: RFC 1123 host names.
//! - `ipv4`: RFC 2673 dotted quad; `ipv6`: RFC 4291 section 2.2 text forms.
//! - `uri`, `uri-reference`: RFC 3986 `URI` and `URI-reference`.
//! - `uuid`: the RFC 4122 string form, any version or variant.
//! - `json-pointer`: RFC 6901; `relative-json-pointer`:
//!   draft-bhutton-relative-json-pointer-00, index manipulation included.
//!
//! Deliberate choices, all on the strict side:
//!
//! - Only ASCII is accepted; the `idn-*` and `iri*` formats are not offered.
//! - `ipv4` (and the IPv4 tail of an IPv6 address) refuses leading zeros such
//!   as `087`, which some parsers read as octal and others as decimal.
//! - `hostname` refuses a trailing dot: the RFC 1123 text form has none, and
//!   the suite refuses it in email domains and refuses `.` alone.
//! - `ipv6` refuses zone identifiers (`fe80::1%eth0`), which RFC 4291 does not
//!   define.
//! - `duration` designators must be upper case, as ISO 8601 writes them.
//! - `date`, `date-time` refuse the year 0000, and `time`, `date-time` a leap
//!   second (`23:59:60Z`), which RFC 3339 allows: Python's `datetime` holds
//!   neither (Pydantic refuses both), JavaScript's `Date` reads a leap second
//!   as `NaN`. A reply the application's own date type cannot hold is refused.
//! - `uri` also asks the WHATWG URL Standard's parser (the `url` crate), and
//!   `hostname` its host parser, as JavaScript, Zod and Pydantic read them.
//! - `email` accepts only the IPv4 and IPv6 address literals, not the general
//!   `tag:content` form, and does not apply the RFC 5321 length limits to the
//!   local part.
//!
//! Every check is a single left-to-right pass (a few for `uri-reference`)
//! and never recurses; all but `uri` and `hostname` allocate nothing (those
//! two also ask the `url` crate's parser, linear in the text).

mod identifiers;

use identifiers::{digest_bytes, digest_name};
pub use identifiers::{DigestEncoding, IpFamily};

/// What an IP-address format of Pydantic's admits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum IpForm {
    /// An address alone (`ipvanyaddress`).
    Address,
    /// An address, optionally with a prefix length (`ipvanyinterface`, `ipv4interface`).
    Interface,
    /// A network: host bits past the prefix are zero (`ipvanynetwork`, `ipv4network`).
    Network,
}

/// A string format the contract asserts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Format {
    /// RFC 3339 `full-date`, e.g. `2024-05-01`.
    Date,
    /// RFC 3339 `date-time`, e.g. `2024-05-01T12:00:00Z`.
    DateTime,
    /// RFC 3339 `full-time`, e.g. `12:00:00+02:00`.
    Time,
    /// RFC 3339 Appendix A duration, e.g. `P3DT4H`.
    Duration,
    /// RFC 5321 mailbox, e.g. `name@example.com`.
    Email,
    /// RFC 1123 host name, e.g. `api.example.com`.
    Hostname,
    /// Dotted-quad IPv4 address, e.g. `192.0.2.1`.
    Ipv4,
    /// RFC 4291 IPv6 address, e.g. `2001:db8::1`.
    Ipv6,
    /// RFC 3986 absolute URI (a scheme is required).
    Uri,
    /// RFC 3986 URI reference (absolute or relative).
    UriReference,
    /// RFC 4122 UUID, e.g. `123e4567-e89b-12d3-a456-426614174000`.
    Uuid,
    /// RFC 6901 JSON Pointer, e.g. `/items/0`.
    JsonPointer,
    /// Relative JSON Pointer, e.g. `1/name` or `0#`.
    RelativeJsonPointer,
    /// OpenAPI's `byte`: RFC 4648 base64, padded.
    Byte,
    /// OpenAPI's `binary` (Pydantic's `bytes`): any string.
    Binary,
    /// OpenAPI's `password` (Pydantic's `SecretStr`): any string, a hint to hide it.
    Password,
    /// Pydantic's `Path`: any string (existence on disk is not a reply's property).
    Path,
    /// A UUID of one version, 1 to 8 (Pydantic's `UUID4`…), RFC 4122 variant.
    UuidVersion(u8),
    /// Pydantic's IP formats: `ipvanyaddress`, `ipv4network`, `ipvanyinterface`…
    Ip(IpForm, IpFamily),
    /// Zod's `cidrv4`/`cidrv6`: an address and a prefix length.
    Cidr(IpFamily),
    /// RFC 4648 base64, padded (Zod's `base64`, Pydantic's `Base64Bytes`).
    Base64,
    /// RFC 4648 base64url, padding optional (Zod writes none, Python requires it).
    Base64Url,
    /// Zod's `cuid`.
    Cuid,
    /// Zod's `cuid2`.
    Cuid2,
    /// A ULID.
    Ulid,
    /// A nanoid (21 characters).
    Nanoid,
    /// An xid.
    Xid,
    /// A KSUID.
    Ksuid,
    /// An E.164 phone number.
    E164,
    /// Hexadecimal digits, any length.
    Hex,
    /// No upper-case ASCII letter.
    Lowercase,
    /// No lower-case ASCII letter.
    Uppercase,
    /// A JSON Web Token, as Zod 4 checks one.
    Jwt,
    /// A MAC address (six hex pairs, one delimiter), as Zod 4 checks one.
    Mac,
    /// A payment card number with its Luhn checksum, as Zod 4 checks one.
    CreditCard,
    /// An IBAN with its mod-97 checksum, as Zod 4 checks one.
    Iban,
    /// A digest of so many bytes in an encoding (Zod's `sha256_hex`…).
    Digest(u8, DigestEncoding),
}

impl Format {
    /// The format for a `format` keyword value, or `None` when vouch does not
    /// know it (the compiler then refuses the contract).
    #[must_use]
    pub fn from_name(name: &str) -> Option<Format> {
        Some(match name {
            "date" => Format::Date,
            "date-time" => Format::DateTime,
            "time" => Format::Time,
            "duration" => Format::Duration,
            "email" => Format::Email,
            "hostname" => Format::Hostname,
            "ipv4" => Format::Ipv4,
            "ipv6" => Format::Ipv6,
            "uri" => Format::Uri,
            "uri-reference" => Format::UriReference,
            "uuid" => Format::Uuid,
            "json-pointer" => Format::JsonPointer,
            "relative-json-pointer" => Format::RelativeJsonPointer,
            "byte" => Format::Byte,
            "binary" => Format::Binary,
            "password" => Format::Password,
            "path" => Format::Path,
            "ipvanyaddress" => Format::Ip(IpForm::Address, IpFamily::Any),
            "ipvanyinterface" => Format::Ip(IpForm::Interface, IpFamily::Any),
            "ipvanynetwork" => Format::Ip(IpForm::Network, IpFamily::Any),
            "ipv4interface" => Format::Ip(IpForm::Interface, IpFamily::V4),
            "ipv6interface" => Format::Ip(IpForm::Interface, IpFamily::V6),
            "ipv4network" => Format::Ip(IpForm::Network, IpFamily::V4),
            "ipv6network" => Format::Ip(IpForm::Network, IpFamily::V6),
            "cidrv4" => Format::Cidr(IpFamily::V4),
            "cidrv6" => Format::Cidr(IpFamily::V6),
            "base64" => Format::Base64,
            "base64url" => Format::Base64Url,
            "cuid" => Format::Cuid,
            "cuid2" => Format::Cuid2,
            "ulid" => Format::Ulid,
            "nanoid" => Format::Nanoid,
            "xid" => Format::Xid,
            "ksuid" => Format::Ksuid,
            "e164" => Format::E164,
            "hex" => Format::Hex,
            "lowercase" => Format::Lowercase,
            "uppercase" => Format::Uppercase,
            "jwt" => Format::Jwt,
            "mac" => Format::Mac,
            "credit_card" => Format::CreditCard,
            "iban" => Format::Iban,
            _ => {
                if let Some(v) = name.strip_prefix("uuid").and_then(|d| d.parse::<u8>().ok()) {
                    return (1..=8).contains(&v).then_some(Format::UuidVersion(v));
                }
                let (algorithm, encoding) = name.split_once('_')?;
                let encoding = match encoding {
                    "hex" => DigestEncoding::Hex,
                    "base64" => DigestEncoding::Base64,
                    "base64url" => DigestEncoding::Base64Url,
                    _ => return None,
                };
                return digest_bytes(algorithm).map(|b| Format::Digest(b, encoding));
            }
        })
    }

    /// The keyword value, e.g. "date-time".
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Format::Date => "date",
            Format::DateTime => "date-time",
            Format::Time => "time",
            Format::Duration => "duration",
            Format::Email => "email",
            Format::Hostname => "hostname",
            Format::Ipv4 => "ipv4",
            Format::Ipv6 => "ipv6",
            Format::Uri => "uri",
            Format::UriReference => "uri-reference",
            Format::Uuid => "uuid",
            Format::JsonPointer => "json-pointer",
            Format::RelativeJsonPointer => "relative-json-pointer",
            Format::Byte => "byte",
            Format::Binary => "binary",
            Format::Password => "password",
            Format::Path => "path",
            Format::UuidVersion(v) => match v {
                1 => "uuid1",
                2 => "uuid2",
                3 => "uuid3",
                4 => "uuid4",
                5 => "uuid5",
                6 => "uuid6",
                7 => "uuid7",
                _ => "uuid8",
            },
            Format::Ip(form, family) => match (form, family) {
                (IpForm::Address, IpFamily::V4) => "ipv4",
                (IpForm::Address, IpFamily::V6) => "ipv6",
                (IpForm::Address, IpFamily::Any) => "ipvanyaddress",
                (IpForm::Interface, IpFamily::V4) => "ipv4interface",
                (IpForm::Interface, IpFamily::V6) => "ipv6interface",
                (IpForm::Interface, IpFamily::Any) => "ipvanyinterface",
                (IpForm::Network, IpFamily::V4) => "ipv4network",
                (IpForm::Network, IpFamily::V6) => "ipv6network",
                (IpForm::Network, IpFamily::Any) => "ipvanynetwork",
            },
            Format::Cidr(IpFamily::V6) => "cidrv6",
            Format::Cidr(_) => "cidrv4",
            Format::Base64 => "base64",
            Format::Base64Url => "base64url",
            Format::Cuid => "cuid",
            Format::Cuid2 => "cuid2",
            Format::Ulid => "ulid",
            Format::Nanoid => "nanoid",
            Format::Xid => "xid",
            Format::Ksuid => "ksuid",
            Format::E164 => "e164",
            Format::Hex => "hex",
            Format::Lowercase => "lowercase",
            Format::Uppercase => "uppercase",
            Format::Jwt => "jwt",
            Format::Mac => "mac",
            Format::CreditCard => "credit_card",
            Format::Iban => "iban",
            Format::Digest(bytes, encoding) => digest_name(bytes, encoding),
        }
    }

    /// A short human phrase for messages, e.g. "an RFC 3339 date-time like
    /// 2024-05-01T12:00:00Z".
    #[must_use]
    pub fn describe(self) -> &'static str {
        match self {
            Format::Date => "an RFC 3339 date like 2024-05-01",
            Format::DateTime => "an RFC 3339 date-time like 2024-05-01T12:00:00Z",
            Format::Time => "an RFC 3339 time with an offset like 12:00:00Z",
            Format::Duration => "an ISO 8601 duration like P3DT4H30M",
            Format::Email => "an email address like name@example.com",
            Format::Hostname => "a hostname like api.example.com",
            Format::Ipv4 => "an IPv4 address like 192.0.2.1",
            Format::Ipv6 => "an IPv6 address like 2001:db8::1",
            Format::Uri => "an absolute URI like https://example.com/path",
            Format::UriReference => "a URI reference like /path?query or https://example.com",
            Format::Uuid => "a UUID like 123e4567-e89b-12d3-a456-426614174000",
            Format::JsonPointer => "a JSON Pointer like /items/0",
            Format::RelativeJsonPointer => "a relative JSON Pointer like 1/name",
            Format::Byte | Format::Base64 => "base64 text (RFC 4648, padded) like aGVsbG8=",
            Format::Binary | Format::Password | Format::Path => "a string",
            Format::UuidVersion(_) => "a UUID of the version the contract names",
            Format::Ip(IpForm::Address, _) => "an IP address like 192.0.2.1 or 2001:db8::1",
            Format::Ip(IpForm::Interface, _) => "an IP interface like 192.0.2.1/24",
            Format::Ip(IpForm::Network, _) => "an IP network like 192.0.2.0/24 (no host bits set)",
            Format::Cidr(_) => "an address and prefix length like 192.0.2.0/24",
            Format::Base64Url => "base64url text like aGVsbG8",
            Format::Cuid => "a cuid like cjld2cjxh0000qzrmn831i7rn",
            Format::Cuid2 => "a cuid2 like tz4a98xxat96iws9zmbrgj3a",
            Format::Ulid => "a ULID like 01ARZ3NDEKTSV4RRFFQ69G5FAV",
            Format::Nanoid => "a 21-character nanoid like V1StGXR8_Z5jdHi6B-myT",
            Format::Xid => "an xid like 9m4e2mr0ui3e8a215n4g",
            Format::Ksuid => "a 27-character KSUID",
            Format::E164 => "an E.164 phone number like +14155552671",
            Format::Hex => "hexadecimal digits",
            Format::Lowercase => "text with no upper-case letter",
            Format::Uppercase => "text with no lower-case letter",
            Format::Jwt => "a JSON Web Token",
            Format::Mac => "a MAC address like 00:1A:2B:3C:4D:5E",
            Format::CreditCard => "a card number with a valid checksum",
            Format::Iban => "an IBAN with a valid checksum like GB82WEST12345698765432",
            Format::Digest(_, DigestEncoding::Hex) => "a digest in hexadecimal of the contract's length",
            Format::Digest(_, _) => "a digest in base64 of the contract's length",
        }
    }

    /// Whether `s` is in this format.
    #[must_use]
    pub fn is_valid(self, s: &str) -> bool {
        match self {
            Format::Date => is_full_date(s.as_bytes()),
            Format::DateTime => is_date_time(s.as_bytes()),
            Format::Time => is_full_time(s.as_bytes()),
            Format::Duration => is_duration(s),
            Format::Email => is_email(s),
            Format::Hostname => is_hostname(s),
            Format::Ipv4 => is_ipv4(s),
            Format::Ipv6 => is_ipv6(s),
            Format::Uri => {
                is_uri(s) && url::Url::parse(s).is_ok() && !credentials_without_host(s) && !special_without_slashes(s)
            }
            Format::UriReference => is_uri(s) || is_relative_ref(s),
            Format::Uuid => is_uuid(s),
            Format::JsonPointer => is_json_pointer(s),
            Format::RelativeJsonPointer => is_relative_json_pointer(s),
            Format::Byte | Format::Base64 => identifiers::is_base64(s),
            Format::Binary | Format::Password | Format::Path => true,
            Format::UuidVersion(v) => identifiers::is_uuid_version(s, v),
            Format::Ip(IpForm::Address, family) => match family {
                IpFamily::V4 => is_ipv4(s),
                IpFamily::V6 => is_ipv6(s),
                IpFamily::Any => is_ipv4(s) || is_ipv6(s),
            },
            Format::Ip(IpForm::Interface, family) => identifiers::is_interface(s, family),
            Format::Ip(IpForm::Network, family) => identifiers::is_network(s, family),
            Format::Cidr(family) => identifiers::is_cidr(s, family),
            Format::Base64Url => identifiers::is_base64url(s),
            Format::Cuid => identifiers::is_cuid(s),
            Format::Cuid2 => identifiers::is_cuid2(s),
            Format::Ulid => identifiers::is_ulid(s),
            Format::Nanoid => identifiers::is_nanoid(s),
            Format::Xid => identifiers::is_xid(s),
            Format::Ksuid => identifiers::is_ksuid(s),
            Format::E164 => identifiers::is_e164(s),
            Format::Hex => identifiers::is_hex(s),
            Format::Lowercase => !s.bytes().any(|b| b.is_ascii_uppercase()),
            Format::Uppercase => !s.bytes().any(|b| b.is_ascii_lowercase()),
            Format::Jwt => identifiers::is_jwt(s),
            Format::Mac => identifiers::is_mac(s),
            Format::CreditCard => identifiers::is_credit_card(s),
            Format::Iban => identifiers::is_iban(s),
            Format::Digest(bytes, encoding) => identifiers::is_digest(s, bytes, encoding),
        }
    }
}

// ---------------------------------------------------------------------------
// Dates and times (RFC 3339 section 5.6)

/// The value of one ASCII digit (`to_digit` refuses every other character,
/// so no Unicode digit gets through).
fn digit(b: u8) -> Option<u32> {
    char::from(b).to_digit(10)
}

fn two_digits(a: u8, b: u8) -> Option<u32> {
    Some(digit(a)? * 10 + digit(b)?)
}

fn is_leap_year(year: u32) -> bool {
    year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
}

fn days_in_month(year: u32, month: u32) -> u32 {
    match month {
        2 if is_leap_year(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// `full-date = date-fullyear "-" date-month "-" date-mday`.
fn is_full_date(s: &[u8]) -> bool {
    let [y1, y2, y3, y4, b'-', m1, m2, b'-', d1, d2] = *s else {
        return false;
    };
    let (Some(high), Some(low), Some(month), Some(day)) =
        (two_digits(y1, y2), two_digits(y3, y4), two_digits(m1, m2), two_digits(d1, d2))
    else {
        return false;
    };
    let year = high * 100 + low;
    year >= 1 && (1..=12).contains(&month) && (1..=days_in_month(year, month)).contains(&day)
}

/// `date-time = full-date "T" full-time`, where RFC 3339 allows a lower-case `t`.
fn is_date_time(s: &[u8]) -> bool {
    match s.split_at_checked(10) {
        Some((date, [b'T' | b't', time @ ..])) => is_full_date(date) && is_full_time(time),
        _ => false,
    }
}

/// `full-time = partial-time time-offset`.
fn is_full_time(s: &[u8]) -> bool {
    let [h1, h2, b':', m1, m2, b':', s1, s2, rest @ ..] = s else {
        return false;
    };
    let (Some(hour), Some(minute), Some(second)) = (two_digits(*h1, *h2), two_digits(*m1, *m2), two_digits(*s1, *s2))
    else {
        return false;
    };
    // No leap second: see the module's deliberate choices.
    hour <= 23 && minute <= 59 && second <= 59 && skip_fraction(rest).and_then(offset_minutes).is_some()
}

/// Skips `time-secfrac = "." 1*DIGIT` if present; `None` for a bare dot.
fn skip_fraction(s: &[u8]) -> Option<&[u8]> {
    let [b'.', tail @ ..] = s else {
        return Some(s);
    };
    let digits = tail.iter().take_while(|b| b.is_ascii_digit()).count();
    if digits == 0 {
        return None;
    }
    tail.get(digits..)
}

/// `time-offset = "Z" / time-numoffset`, as signed minutes east of UTC; the
/// input must end with it.
fn offset_minutes(s: &[u8]) -> Option<i64> {
    match *s {
        [b'Z' | b'z'] => Some(0),
        [sign @ (b'+' | b'-'), h1, h2, b':', m1, m2] => {
            let (hour, minute) = (two_digits(h1, h2)?, two_digits(m1, m2)?);
            if hour > 23 || minute > 59 {
                return None;
            }
            let minutes = i64::from(hour * 60 + minute);
            Some(if sign == b'-' { -minutes } else { minutes })
        }
        _ => None,
    }
}

// ---------------------------------------------------------------------------
// Durations (RFC 3339 Appendix A)

/// `duration = "P" (dur-date / dur-time / dur-week)`.
fn is_duration(s: &str) -> bool {
    let Some(body) = s.strip_prefix('P') else {
        return false;
    };
    if let Some(weeks) = body.strip_suffix('W') {
        return is_digits(weeks);
    }
    match body.split_once('T') {
        // `dur-date [dur-time]` or a bare `dur-time`: the date part may be
        // empty, but `T` must be followed by at least one element.
        Some((date, time)) => {
            duration_elements(date, b"YMD").is_some() && duration_elements(time, b"HMS").is_some_and(|n| n > 0)
        }
        None => duration_elements(body, b"YMD").is_some_and(|n| n > 0),
    }
}

/// Counts the `1*DIGIT unit` elements of `s`, or `None` when they are not a
/// contiguous run of `units` in order (the grammar nests `Y [M [D]]`, so
/// `P1Y2D` skipping the month is not a duration).
fn duration_elements(s: &str, units: &[u8]) -> Option<usize> {
    let mut count = 0;
    let mut next_unit: Option<usize> = None;
    let mut bytes = s.bytes().peekable();
    while bytes.peek().is_some() {
        let mut digits = 0;
        while bytes.next_if(u8::is_ascii_digit).is_some() {
            digits += 1;
        }
        let unit = bytes.next()?;
        let at = units.iter().position(|&u| u == unit)?;
        if digits == 0 || next_unit.is_some_and(|expected| expected != at) {
            return None;
        }
        next_unit = Some(at + 1);
        count += 1;
    }
    Some(count)
}

fn is_digits(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

// ---------------------------------------------------------------------------
// Host names and IP addresses

/// RFC 1123 host name: dot-separated labels of 1 to 63 letters, digits and
/// hyphens, not starting or ending with a hyphen, 253 characters at most.
/// RFC 1123 host name syntax, that the WHATWG URL Standard's host parser
/// also reads as a domain: not a number (`999.999.999.999`, `a.123`, which
/// RFC 1123 §2.1 rules out too) and no malformed punycode (`xn--a`).
fn is_hostname(s: &str) -> bool {
    s.len() <= 253 && s.split('.').all(is_host_label) && matches!(url::Host::parse(s), Ok(url::Host::Domain(_)))
}

fn is_host_label(label: &str) -> bool {
    (1..=63).contains(&label.len())
        && !label.starts_with('-')
        && !label.ends_with('-')
        && label.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
}

/// Dotted quad of decimal octets without leading zeros.
fn is_ipv4(s: &str) -> bool {
    let mut parts = 0;
    for part in s.split('.') {
        parts += 1;
        if parts > 4 || !is_dec_octet(part) {
            return false;
        }
    }
    parts == 4
}

/// RFC 3986 `dec-octet`: 0 to 255, with no leading zero.
fn is_dec_octet(s: &str) -> bool {
    let canonical = s == "0" || !s.starts_with('0');
    canonical && (1..=3).contains(&s.len()) && is_digits(s) && s.parse::<u8>().is_ok()
}

/// RFC 4291 section 2.2: eight groups, or fewer around a single `::`, the
/// last two of which may be written as an IPv4 dotted quad.
fn is_ipv6(s: &str) -> bool {
    match s.split_once("::") {
        Some((head, tail)) => {
            let head_groups = if head.is_empty() { Some(0) } else { h16_groups(head, false) };
            let tail_groups = if tail.is_empty() { Some(0) } else { h16_groups(tail, true) };
            // `::` stands for at least one group of zeros, so at most seven
            // are written; a second `::` leaves an empty group in the tail.
            matches!((head_groups, tail_groups), (Some(h), Some(t)) if h + t <= 7)
        }
        None => h16_groups(s, true) == Some(8),
    }
}

/// Counts the 16-bit groups in a `:`-separated run of `h16`, the last of
/// which may be an IPv4 address (two groups) when `ipv4_tail` allows it.
fn h16_groups(s: &str, ipv4_tail: bool) -> Option<usize> {
    let mut groups = 0;
    let mut parts = s.split(':').peekable();
    while let Some(part) = parts.next() {
        let is_last = parts.peek().is_none();
        groups += if is_h16(part) {
            1
        } else if is_last && ipv4_tail && is_ipv4(part) {
            2
        } else {
            return None;
        };
        if groups > 8 {
            return None;
        }
    }
    Some(groups)
}

fn is_h16(s: &str) -> bool {
    (1..=4).contains(&s.len()) && s.bytes().all(|b| b.is_ascii_hexdigit())
}

// ---------------------------------------------------------------------------
// Email (RFC 5321 section 4.1.2 `Mailbox`)

/// `Mailbox = Local-part "@" ( Domain / address-literal )`.
fn is_email(s: &str) -> bool {
    let domain = if let Some(quoted) = s.strip_prefix('"') {
        // A quoted local part may itself hold `@`, so find its end first.
        match quoted_string_rest(quoted).and_then(|rest| rest.strip_prefix('@')) {
            Some(domain) => domain,
            None => return false,
        }
    } else {
        // `atext` has no `@`, so the first one ends the local part.
        match s.split_once('@') {
            Some((local, domain)) if is_dot_atom(local) => domain,
            _ => return false,
        }
    };
    match domain.strip_prefix('[') {
        Some(literal) => literal.strip_suffix(']').is_some_and(is_address_literal),
        None => is_hostname(domain),
    }
}

/// Given the text after an opening `"`, returns what follows the closing one.
fn quoted_string_rest(s: &str) -> Option<&str> {
    let mut bytes = s.bytes().enumerate();
    while let Some((at, b)) = bytes.next() {
        match b {
            b'"' => return s.get(at + 1..),
            // `quoted-pairSMTP = %d92 %d32-126`
            b'\\' => {
                bytes.next().filter(|&(_, escaped)| (32..=126).contains(&escaped))?;
            }
            // `qtextSMTP = %d32-33 / %d35-91 / %d93-126`
            32..=126 => {}
            _ => return None,
        }
    }
    None
}

/// `Dot-string = Atom *("." Atom)`.
fn is_dot_atom(s: &str) -> bool {
    s.split('.').all(|atom| !atom.is_empty() && atom.bytes().all(is_atext))
}

/// RFC 5322 `atext`.
fn is_atext(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-/=?^_`{|}~".contains(&b)
}

/// The inside of `[...]`: `IPv4-address-literal` or `IPv6-address-literal`
/// (whose `IPv6:` tag is case-insensitive, as ABNF strings are).
fn is_address_literal(s: &str) -> bool {
    let tag = "IPv6:";
    match s.get(..tag.len()) {
        Some(prefix) if prefix.eq_ignore_ascii_case(tag) => s.get(tag.len()..).is_some_and(is_ipv6),
        _ => is_ipv4(s),
    }
}

// ---------------------------------------------------------------------------
// URIs (RFC 3986 Appendix A)

/// `unreserved = ALPHA / DIGIT / "-" / "." / "_" / "~"`.
fn is_unreserved(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~')
}

/// `sub-delims = "!" / "$" / "&" / "'" / "(" / ")" / "*" / "+" / "," / ";" / "="`.
fn is_sub_delim(b: u8) -> bool {
    matches!(b, b'!' | b'$' | b'&' | b'\'' | b'(' | b')' | b'*' | b'+' | b',' | b';' | b'=')
}

/// `pchar` without `pct-encoded`, which [`is_escaped_run`] handles.
fn is_pchar(b: u8) -> bool {
    is_unreserved(b) || is_sub_delim(b) || matches!(b, b':' | b'@')
}

fn is_path_char(b: u8) -> bool {
    is_pchar(b) || b == b'/'
}

/// `query` and `fragment`: `*( pchar / "/" / "?" )`.
fn is_query_char(b: u8) -> bool {
    is_path_char(b) || b == b'?'
}

/// Whether every byte of `s` is `allowed` or part of a `%HH` escape.
fn is_escaped_run(s: &str, allowed: impl Fn(u8) -> bool) -> bool {
    let mut bytes = s.bytes();
    while let Some(b) = bytes.next() {
        let ok = if b == b'%' {
            let mut hex = || bytes.next().is_some_and(|h| h.is_ascii_hexdigit());
            hex() && hex()
        } else {
            allowed(b)
        };
        if !ok {
            return false;
        }
    }
    true
}

/// Splits off `[ "?" query ] [ "#" fragment ]`, checking both, and returns
/// the part before them; neither part can contain `#`, and only the fragment
/// ends the query.
fn strip_query_and_fragment(s: &str) -> Option<&str> {
    let (s, fragment) = s.split_once('#').unwrap_or((s, ""));
    let (s, query) = s.split_once('?').unwrap_or((s, ""));
    (is_escaped_run(query, is_query_char) && is_escaped_run(fragment, is_query_char)).then_some(s)
}

/// `URI = scheme ":" hier-part [ "?" query ] [ "#" fragment ]`.
fn is_uri(s: &str) -> bool {
    let Some((scheme, hier_part)) = strip_query_and_fragment(s).and_then(|s| s.split_once(':')) else {
        return false;
    };
    is_scheme(scheme) && is_hier_part(hier_part, false)
}

/// An authority with a user (`foo://u@`, `foo://:@/x`) or a port
/// (`foo://:80`) but no host, which the WHATWG URL Standard refuses for
/// every scheme; the `url` crate drops the empty credentials of a scheme it
/// does not know, and takes the rest.
fn credentials_without_host(s: &str) -> bool {
    let Some((_, rest)) = s.split_once("://") else { return false };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let host_port = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    !authority.is_empty() && (host_port.is_empty() || host_port.starts_with(':'))
}

/// A scheme the WHATWG URL Standard calls special (`http`, `file`…) not
/// followed by `//` (`http:x.com`, `https:/x.com`, `file:/etc/hosts`): the
/// parser guesses the slashes with a validation error, which Pydantic's
/// strict URL types refuse.
fn special_without_slashes(s: &str) -> bool {
    let Some((scheme, rest)) = s.split_once(':') else { return false };
    let special = ["ftp", "file", "http", "https", "ws", "wss"].iter().any(|k| scheme.eq_ignore_ascii_case(k));
    special && !rest.starts_with("//")
}

/// `relative-ref = relative-part [ "?" query ] [ "#" fragment ]`.
fn is_relative_ref(s: &str) -> bool {
    strip_query_and_fragment(s).is_some_and(|part| is_hier_part(part, true))
}

/// `scheme = ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )`.
fn is_scheme(s: &str) -> bool {
    s.bytes().next().is_some_and(|b| b.is_ascii_alphabetic())
        && s.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'))
}

/// `hier-part`, or `relative-part` when `relative`: `"//" authority
/// path-abempty`, or a path that does not start with `//`. In a relative
/// part the first segment may not hold a colon (`path-noscheme`), or it would
/// read as a scheme.
fn is_hier_part(s: &str, relative: bool) -> bool {
    if let Some(rest) = s.strip_prefix("//") {
        // The authority ends at the first `/`; `path-abempty` is the rest.
        let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
        return is_authority(authority) && is_escaped_run(path, is_path_char);
    }
    let first_segment = s.split('/').next().unwrap_or_default();
    !(relative && first_segment.contains(':')) && is_escaped_run(s, is_path_char)
}

/// `authority = [ userinfo "@" ] host [ ":" port ]`.
fn is_authority(s: &str) -> bool {
    // Neither `userinfo` nor `host` admits `@`, so the first one is the split.
    let (userinfo, host_port) = s.split_once('@').unwrap_or(("", s));
    let Some((host, port)) = split_port(host_port) else {
        return false;
    };
    // `port = *DIGIT`, so an empty port after the colon is allowed.
    is_escaped_run(userinfo, |b| is_unreserved(b) || is_sub_delim(b) || b == b':')
        && is_host(host)
        && port.bytes().all(|b| b.is_ascii_digit())
}

/// Splits `host [ ":" port ]`, or `None` when something other than a port
/// follows an IP literal's closing bracket.
fn split_port(s: &str) -> Option<(&str, &str)> {
    if !s.starts_with('[') {
        // `reg-name` admits no `:`, so the first one starts the port.
        return Some(s.split_once(':').unwrap_or((s, "")));
    }
    let (literal, after) = s.split_once(']')?;
    let port = if after.is_empty() { after } else { after.strip_prefix(':')? };
    Some((literal, port))
}

/// `host = IP-literal / IPv4address / reg-name`, where an IP literal arrives
/// without its closing bracket. Every `IPv4address` is also a `reg-name`.
fn is_host(host: &str) -> bool {
    match host.strip_prefix('[') {
        Some(literal) => is_ipv6(literal) || is_ipv_future(literal),
        None => is_escaped_run(host, |b| is_unreserved(b) || is_sub_delim(b)),
    }
}

/// `IPvFuture = "v" 1*HEXDIG "." 1*( unreserved / sub-delims / ":" )`.
fn is_ipv_future(s: &str) -> bool {
    let Some(rest) = s.strip_prefix(['v', 'V']) else {
        return false;
    };
    let Some((version, address)) = rest.split_once('.') else {
        return false;
    };
    !version.is_empty()
        && version.bytes().all(|b| b.is_ascii_hexdigit())
        && !address.is_empty()
        && address.bytes().all(|b| is_unreserved(b) || is_sub_delim(b) || b == b':')
}

// ---------------------------------------------------------------------------
// UUIDs and JSON Pointers

/// `8-4-4-4-12` hexadecimal digits, either case.
fn is_uuid(s: &str) -> bool {
    s.len() == 36
        && s.bytes().enumerate().all(|(at, b)| match at {
            8 | 13 | 18 | 23 => b == b'-',
            _ => b.is_ascii_hexdigit(),
        })
}

/// RFC 6901: empty, or `/`-prefixed tokens where `~` only starts `~0` or `~1`.
fn is_json_pointer(s: &str) -> bool {
    if !(s.is_empty() || s.starts_with('/')) {
        return false;
    }
    let mut bytes = s.bytes();
    while let Some(b) = bytes.next() {
        if b == b'~' && !matches!(bytes.next(), Some(b'0' | b'1')) {
            return false;
        }
    }
    true
}

/// `relative-json-pointer = non-negative-integer [index-manipulation]
/// ( json-pointer / "#" )`, with `index-manipulation = ( "+" / "-" )
/// non-negative-integer`.
fn is_relative_json_pointer(s: &str) -> bool {
    let Some(mut rest) = strip_non_negative_integer(s) else {
        return false;
    };
    if let Some(manipulated) = rest.strip_prefix(['+', '-']) {
        match strip_non_negative_integer(manipulated) {
            Some(after) => rest = after,
            None => return false,
        }
    }
    rest == "#" || is_json_pointer(rest)
}

/// Strips a leading `"0" / %x31-39 *DIGIT` and returns the rest.
fn strip_non_negative_integer(s: &str) -> Option<&str> {
    let len = s.bytes().take_while(u8::is_ascii_digit).count();
    let (number, rest) = s.split_at_checked(len)?;
    let canonical = number == "0" || (!number.is_empty() && !number.starts_with('0'));
    canonical.then_some(rest)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use super::Format;

    const ALL: [Format; 13] = [
        Format::Date,
        Format::DateTime,
        Format::Time,
        Format::Duration,
        Format::Email,
        Format::Hostname,
        Format::Ipv4,
        Format::Ipv6,
        Format::Uri,
        Format::UriReference,
        Format::Uuid,
        Format::JsonPointer,
        Format::RelativeJsonPointer,
    ];

    /// Checks every string, then reports all the ones that went the wrong way.
    fn check(format: Format, valid: &[&str], invalid: &[&str]) {
        let refused = valid.iter().filter(|s| !format.is_valid(s));
        let accepted = invalid.iter().filter(|s| format.is_valid(s));
        let wrong: Vec<String> = refused
            .map(|s| format!("  refused but valid:    {s:?}"))
            .chain(accepted.map(|s| format!("  accepted but invalid: {s:?}")))
            .collect();
        assert!(wrong.is_empty(), "format {:?}:\n{}", format.name(), wrong.join("\n"));
    }

    #[test]
    fn names_round_trip() {
        for format in ALL {
            assert_eq!(Format::from_name(format.name()), Some(format));
        }
        let unknown = ["", "Date", "DATE-TIME", "idn-email", "iri", "uri-template", "regex", "date-time "];
        for name in unknown {
            assert_eq!(Format::from_name(name), None, "{name:?}");
        }
    }

    /// The example in each description must itself be in the format.
    #[test]
    fn descriptions_show_valid_examples() {
        let examples = [
            (Format::Date, "2024-05-01"),
            (Format::DateTime, "2024-05-01T12:00:00Z"),
            (Format::Time, "12:00:00Z"),
            (Format::Duration, "P3DT4H30M"),
            (Format::Email, "name@example.com"),
            (Format::Hostname, "api.example.com"),
            (Format::Ipv4, "192.0.2.1"),
            (Format::Ipv6, "2001:db8::1"),
            (Format::Uri, "https://example.com/path"),
            (Format::UriReference, "/path?query"),
            (Format::Uuid, "123e4567-e89b-12d3-a456-426614174000"),
            (Format::JsonPointer, "/items/0"),
            (Format::RelativeJsonPointer, "1/name"),
        ];
        for (format, example) in examples {
            assert!(format.describe().contains(example), "{format:?}");
            assert!(format.is_valid(example), "{format:?} {example:?}");
        }
    }

    #[rustfmt::skip]
    #[test]
    fn date() {
        check(Format::Date, &[
            "1963-06-19", "2020-01-31", "2021-02-28", "2020-02-29", "2020-03-31", "2020-04-30",
            "2020-05-31", "2020-06-30", "2020-07-31", "2020-08-31", "2020-09-30", "2020-10-31",
            "2020-11-30", "2020-12-31", "0400-02-29", "2000-02-29", "0001-01-01",
            "9999-12-31",
        ], &[
            "", "2020-01-32", "2020-02-30", "2021-02-29", "2100-02-29", "1900-02-29", "0100-02-29",
            "2020-03-32", "2020-04-31", "2020-06-31", "2020-09-31", "2020-11-31", "2020-12-32",
            "2020-13-01", "1998-13-01", "2024-00-15", "2024-01-00", "1998-1-20", "1998-01-1",
            "06/19/1963", "2013-350", "1963-06-1৪", "2020-0৪-01", "২020-01-01", "20230328",
            "2023-W01", "2023-W13-2", "2022W527", "2020-11-28T23:55:45Z", " 2024-01-15",
            "2024-01-15 ", "2020 -01-01", "2020-01-01X", "2020-01-01Z", "2020-01-01 00:00:00Z",
            "20-01-01", "998-01-01", "12020-01-01", "+2020-01-01", "-2020-01-01", "YYYY-01-01",
            "2020-001-01", "2020-MM-01", "2020-01-001", "2020-01-DD", "2020:01:01", "2020.01.01",
            "2020 01 01", "2020-01/01", "2020--01-01", "2020-01--01", "2020-01-01\n", "2020-+1-01",
            // RFC 3339's year 0000, which Python's date cannot hold.
            "0000-01-01", "0000-02-29",
        ]);
    }

    #[rustfmt::skip]
    #[test]
    fn time() {
        check(Format::Time, &[
            "08:30:06Z", "08:30:06z", "23:20:50.52Z",
            "08:30:06.283185Z", "08:30:06+00:20", "08:30:06-08:00", "12:34:56-00:00",
            "00:00:00Z", "23:59:59+23:59", "23:59:59-23:59",
        ], &[
            // RFC 3339's leap seconds (at 23:59 UTC), which Python's time and
            // datetime cannot hold and JavaScript's Date reads as NaN.
            "23:59:60Z", "23:59:60+00:00", "01:29:60+01:30", "23:29:60+23:30", "15:59:60-08:00",
            "00:29:60-23:30", "23:59:60.5Z",
            "", "008:030:006Z", "8:3:6Z", "8:0030:6Z", "22:59:60Z", "23:58:60Z",
            "22:59:60+00:00", "23:58:60+00:00", "23:59:60+01:00", "23:59:60+00:30",
            "23:59:60-01:00", "23:59:60-00:30", "08:30:06-8:000", "24:00:00Z", "00:60:00Z",
            "00:00:61Z", "01:02:03+24:00", "01:02:03+00:60", "01:02:03Z+00:30", "08:30:06 PST",
            "01:01:01,1111", "12:00:00", "12:00:00.52", "1২:00:00Z", "08:30:06#00:20",
            "ab:cd:ef", "2020-11-28T23:55:45Z", "08:30:06+0130", "08:30:06+01", "08:30:06Z\n",
            "24:59:00+01:00", "12:00:00.Z", "12:00:00.5.5Z", "12:00Z", "12:00:00ZZ",
            "12:00:00+01:00Z", " 12:00:00Z",
        ]);
    }

    #[rustfmt::skip]
    #[test]
    fn date_time() {
        check(Format::DateTime, &[
            "1963-06-19T08:30:06.283185Z", "1963-06-19T08:30:06Z", "1937-01-01T12:00:27.87+00:20",
            "1990-12-31T15:59:50.123-08:00",
            "1963-06-19t08:30:06.283185z", "1985-04-12T00:59:59.999999999999999Z",
            "2020-02-29T00:00:00Z",
        ], &[
            // A leap second, and the year 0000 (see `time` and `date`).
            "1998-12-31T23:59:60Z", "1998-12-31T15:59:60.123-08:00", "0000-01-01T00:00:00Z",
            "", "1998-12-31T23:59:61Z", "1998-12-31T23:58:60Z", "1998-12-31T22:59:60Z",
            "1990-02-31T15:59:59.123-08:00", "1990-12-31T15:59:59-24:00",
            "1963-06-19T08:30:06.28123+01:00Z", "1990-12-31T24:00:00Z", "1990-12-31T15:60:00Z",
            "1990-12-31T10:00:00+10:60", "06/19/1963 08:30:06 PST", "2013-350T01:01:01",
            "1963-6-19T08:30:06.283185Z", "1963-06-1T08:30:06.283185Z", "1963-06-1৪T00:00:00Z",
            "1963-06-11T0৪:00:00Z", "+11963-06-19T08:30:06.283185Z", "1963-06-19 08:30:06Z",
            "1963-06-19T08:30:06", "2021-02-29T00:00:00Z", "1963-06-19", "1963-06-19T",
            "1963-06-19X08:30:06Z",
        ]);
    }

    #[rustfmt::skip]
    #[test]
    fn duration() {
        check(Format::Duration, &[
            "P4DT12H30M5S", "P4Y", "PT0S", "P0D", "P1M", "PT1M", "PT36H", "P1DT12H", "P2W",
            "P1Y2M3DT4H5M6S", "P1Y2M3D", "PT1H2M3S", "P1M2D", "PT1H30M", "P10Y10M10DT10H10M10S",
            "P1Y2M", "PT1H2M", "PT1M2S", "P01D", "PT1S",
            "P999999999999999999999999999999999999999999999999999999999999999999999999999999D",
        ], &[
            "", "PT1D", "4DT12H30M5S", "P", "P1YT", "PT", "P2D1Y", "P1D2H", "P2S", "P1Y2W", "P২Y",
            "P1", "PT0.5S", " P1D", "P1D ", "P1Y2D", "PT1H2S", "-P1D", "P1D2T3H", "P1e2D",
            "P1D\n", "P1WT1H", "P0Y1W", "PT0,5S", "P-1D", "PW", "P1W1W", "P1Y1Y", "PT1H1H",
            "P1DT", "PTT1H", "P1DT1HT1M", "p1d", "P1d", "P1D1", "PT1M1M", "P1M1Y", "PT1S1M",
        ]);
    }

    #[rustfmt::skip]
    #[test]
    fn email() {
        check(Format::Email, &[
            "joe.bloggs@example.com", "te~st@example.com", "~test@example.com", "test~@example.com",
            "\"joe bloggs\"@example.com", "\"joe..bloggs\"@example.com", "\"joe@bloggs\"@example.com",
            "joe.bloggs@[127.0.0.1]", "joe.bloggs@[IPv6:::1]", "te.s.t@example.com",
            "\"\"@iana.org", "\" \"@iana.org", "test@c--n.com",
            "test@123.com", "\"test\"@iana.org", "\"\\a\"@iana.org", "\"\\\"\"@iana.org",
            "\"\\\\\"@iana.org", "test@io", "a@[ipv6:::1]", "a@[IPv6:2001:db8::192.0.2.1]",
            "!#$%&'*+-/=?^_`{|}~@example.com",
        ], &[
            "", "2962", ".test@example.com", "test.@example.com", "te..st@example.com",
            "joe.bloggs@invalid=domain.com", "joe.bloggs@[127.0.0.300]",
            "user1@oceania.org, user2@oceania.org",
            "\"Winston Smith\" <winston.smith@recdep.minitrue> (Records Department)", "@example.com",
            "joe.bloggs@", "joe bloggs@example.com", "a\u{e9}@iana.org", "a@\u{e9}.org",
            "a\u{ff20}iana.org", "\"test\\\u{a9}\"@iana.org", "test@iana.org\n", "test@iana.org\r",
            "a@iana.org ", " a@iana.org", "a\tb@iana.org", "\u{7f}@iana.org", "test\"@iana.org",
            "\"test\"test@iana.org", "\"test@iana.org", "a@b@c.org", "test\\@test@iana.org",
            "[1.2.3.4]@iana.org", "test@-iana.org", "test@iana-.com", "test@.iana.org",
            "test@iana.org.", "test@iana..com", "test@[1.2.3.4", "a@[]", "a@[1.2.3]",
            "a@[1.2.3.4.5]", "test@[RFC-5322-domain-literal]", "test@a[255.255.255.255]",
            "a,b@iana.org", "a;b@iana.org", "a:b@iana.org", "test(comment)@iana.org",
            "a@b(c).org", "a@[IPv6:1.2.3.4]", "a@[IPv4:1.2.3.4]", "a@[::1]", "\"a\tb\"@iana.org",
            "\"a\\", "a@under_score.com", "a@[IPv6:::1]x", "a@[IPv6:::1%eth0]",
            // A domain that is a number: an address goes in brackets.
            "test@255.255.255.255", "a@b.123", "a@xn--a.com",
        ]);
    }

    #[rustfmt::skip]
    #[test]
    fn hostname() {
        let label63 = "abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijk";
        let longest = [label63, label63, label63, &label63[..61]].join(".");
        let too_long = [label63, label63, label63, &label63[..62]].join(".");
        assert_eq!((longest.len(), too_long.len()), (253, 254));
        check(Format::Hostname, &[
            "www.example.com", "xn--4gbwdl.xn--wgbh1c", "hostname", "host-name", "h0stn4me", "1host",
            "hostnam3", "a", "A.B.C", "123.com", "c--n.com", "XN--4GBWDL.com",
            "abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijk.com", &longest,
        ], &[
            "", ".", "-a-host-name-that-starts-with--", "not_a_valid_host_name",
            "a-vvvvvvvvvvvvvvvveeeeeeeeeeeeeeeerrrrrrrrrrrrrrrryyyyyyyyyyyyyyyy-long-host-name-component",
            "-hostname", "hostname-", "_hostname", "hostname_", "host_name",
            "abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijkl.com", "example.com.",
            ".example.com", "example..com", "exa mple.com", "例子.测试", "ex\u{e4}mple.com", &too_long,
            "example.com\n", "a.-b.c", "a.b-.c",
            // Dotted-decimal (RFC 1123 §2.1: a top label is never a number),
            // a number a URL parser reads as an address, malformed punycode.
            "255.255.255.255", "1.2.3.999", "999.999.999.999", "a.123", "a.0x1", "xn--a", "xn--X.com",
        ]);
    }

    #[rustfmt::skip]
    #[test]
    fn ipv4() {
        check(Format::Ipv4, &[
            "192.168.0.1", "0.0.0.0", "255.255.255.255", "10.0.0.10", "1.22.133.200",
        ], &[
            "", "127.0.0.0.1", "256.256.256.256", "127.0", "127.1", "127.0.1", "0x7f000001",
            "2130706433", "1২7.0.0.1", "১২৩.1.1.1", "192.168.1.0/24", " 192.168.0.1", "192.168.0.1 ",
            "192.168.0.1\n", "0x7f.0.0.1", "0o10.0.0.1", "192.168..1", ".192.168.0.1",
            "192.168.0.1.", "+1.2.3.4", "-1.2.3.4", "1e2.0.0.1", "192.168.a.1", "192. 168.0.1",
            "192.168.0.1\t", "192.168.0.1:80", "192.168.0.256", "087.10.0.1", "00.1.2.3",
            "1.2.3.04", "0255.1.1.1", "1000.1.1.1", "...",
        ]);
    }

    #[rustfmt::skip]
    const IPV6_VALID: &[&str] = &[
        "::1", "::abef", "::", "::42:ff:1", "d6::", "1:d6::42", "1::d6:192.168.0.1", "1:2::192.168.0.1",
        "::ffff:192.168.0.1", "::ffff:1.2.3.4", "1:2:3:4:5:6:7:8",
        "1000:1000:1000:1000:1000:1000:255.255.255.255", "2001:DB8::1", "fe80::a", "1:2:3:4:5:6:7::",
        "::2:3:4:5:6:7:8", "1::8", "1:2:3:4:5:6::8", "::0.0.0.0",
        "ABCD:EF01:2345:6789:ABCD:EF01:2345:6789", "1:2:3:4:5::1.2.3.4",
    ];

    #[rustfmt::skip]
    const IPV6_INVALID: &[&str] = &[
        "", "12345::", "::abcef", "1:1:1:1:1:1:1:1:1:1:1:1:1:1:1:1", "::laptop", ":2:3:4:5:6:7:8",
        "1:2:3:4:5:6:7:", ":2:3:4::8", "1::d6::42", "1::2::3", "1::2:192.168.256.1", "1::2:192.168.ff.1",
        "1:2:3:4:5:::8", "1:2:3:4:5:6:7", "1", "127.0.0.1", "1:2:3:4:1.2.3", "  ::1", "::1  ",
        "fe80::/64", "fe80::a%eth1", "fe80::1%25eth0",
        "100:100:100:100:100:100:255.255.255.255.255", "100:100:100:100:100:100:100:255.255.255.255",
        "1:2:3:4:5:6:7:৪", "1:2::192.16৪.0.1", "::ffff:256.1.1.1", "::ffff:192.168.0.01",
        "1.2.3.4::", "1.2.3.4:1::", "1:2:3:4:5:6:7:8::", "::1:2:3:4:5:6:7:8", "1:2:3:4:5:6::1.2.3.4",
        ":::", "::1:", ":1::", "[::1]", "1:2:3:4:5:6:7:8:9", ":", "::1.2.3.4:1",
    ];

    #[test]
    fn ipv6() {
        check(Format::Ipv6, IPV6_VALID, IPV6_INVALID);
    }

    /// std's parser implements the same RFC 4291 text forms, so the two must
    /// agree on every hand-picked case.
    #[test]
    fn ipv6_agrees_with_std_on_the_tables() {
        for s in IPV6_VALID.iter().chain(IPV6_INVALID) {
            let std_ok = s.parse::<std::net::Ipv6Addr>().is_ok();
            assert_eq!(Format::Ipv6.is_valid(s), std_ok, "{s:?}");
        }
    }

    /// A deterministic xorshift generator (no dependencies) joins tokens with
    /// colons, so `:::`, too many groups and misplaced IPv4 tails come up
    /// often; std's parsers must agree on every one.
    #[test]
    fn ip_addresses_agree_with_std_on_generated_strings() {
        const TOKENS: [&str; 12] =
            ["", "", "0", "1", "ff", "abcd", "12345", "1.2.3.4", "01.2.3.4", "256.0.0.1", "g", "0.0.0"];
        let mut state: u64 = 0x2545_f491_4f6c_dd1d;
        let mut next = move |bound: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            usize::try_from(state % u64::try_from(bound).unwrap()).unwrap()
        };
        for _ in 0..200_000 {
            let count = 1 + next(10);
            let tokens: Vec<&str> = (0..count).map(|_| TOKENS[next(TOKENS.len())]).collect();
            let v6 = tokens.join(":");
            let std_v6 = v6.parse::<std::net::Ipv6Addr>().is_ok();
            assert_eq!(Format::Ipv6.is_valid(&v6), std_v6, "ipv6 {v6:?}");
            let v4 = tokens.join(".");
            let std_v4 = v4.parse::<std::net::Ipv4Addr>().is_ok();
            assert_eq!(Format::Ipv4.is_valid(&v4), std_v4, "ipv4 {v4:?}");
        }
    }

    #[rustfmt::skip]
    #[test]
    fn uri() {
        check(Format::Uri, &[
            "http://foo.bar/?baz=qux#quux", "http://foo.com/blah_(wikipedia)_blah#cite-1",
            "http://foo.bar/?q=Test%20URL-encoded%20stuff", "http://xn--nw2a.xn--j6w193g/",
            "http://-.~_!$&'()*+,;=:%40:80%2f::::::@example.com", "http://223.255.255.254",
            "ftp://ftp.is.co.za/rfc/rfc1808.txt", "http://www.ietf.org/rfc/rfc2396.txt",
            "ldap://[2001:db8::7]/c=GB?objectClass?one", "mailto:John.Doe@example.com",
            "news:comp.infosystems.www.servers.unix", "tel:+1-816-555-1212",
            "urn:oasis:names:specification:docbook:dtd:xml:4.1.2",
            "http://a.com:", "http://a.com:65535",
            "http://@a.com", "http://!$&'()*+,;=.com", "http://example.com.",
            "http://exa~mple.com/", "http://under_score.com/", "http://[::1]:80/a?b#c",
            "http://example.com/%25", "http://example.com/a%2Fb%2f", "a:", "a+b-c.d:x",
            "urn:uuid:2eb8aa08-aa98-11ea-b4aa-73b441d16380",
            "http://[::ffff:1.2.3.4]", "file:///etc/hosts", "http://a/b//c", "http://a?#", "x:/a",
            "x:a//b", "http://a#b?c/d",
        ], &[
            // RFC 3986 URIs the WHATWG URL parser refuses (JavaScript's `URL`,
            // Zod's `z.url()`, Pydantic's URL types): a port past 65535, a
            // special scheme without a host, a host that reads as a number but
            // is no IPv4 address (`087` is octal to some readers), an IPvFuture
            // literal, bad punycode, a forbidden code point once decoded.
            "http://087.10.0.1/", "http://999.999.999.999/", "http://a.com:999999999",
            "http://a.com:65536/", "http://:80", "http://user@", "http://[v1.fe]/", "foo://[v1.x]",
            "http:", "https:", "http://", "http:///", "http://@/", "http://a.123/", "http://1.2.3.4.5/",
            "http://xn--a/", "http://%00/", "http://a%2Fb/",
            "foo://@", "foo://:@", "foo://:@/x", "urn://:@?q", "mailto://:@#f", "foo://u@", "foo://:80",
            "foo://u@:80", "foo://:", "http:x.com", "https:/x.com", "file:/etc/passwd", "WS:x",
            "", "//foo.bar/?baz=qux#quux", "//foo", "/abc", "\\\\WINDOWS\\fileshare", "abc",
            "http:// shouldfail.com", ":// should fail", "bar,baz:foo", "https://[@example.org/test.txt",
            "https://example.org/foobar®.txt", "https://example.org/foobar\\.txt",
            "https://example.org/foobar\".txt", "https://example.org/foobar<>.txt",
            "https://example.org/foobar{}.txt", "https://example.org/foobar^.txt",
            "https://example.org/foobar`.txt", "https://example.org/foo bar.txt",
            "https://example.org/foobar|.txt", "http://example.com/%6G", "http://example.com/%A",
            "http://example.com/%", "1http://example.com", "ht_tp://example.com",
            "http://example.com:abc/path", "http://a.com:8:0", "http://a.com::", "http://[::1",
            "http://[::1]x", "http://[1::2::3]/", "http://[::ffff:192.168.0.01]/",
            "http://[fe80::1%25eth0]/", "http://a@b@c/", "http://a#b#c", "http://a/[x]",
            "http://ex%zample.com", "http://a/\n", "http://[v.fe]/", "http://[v1.]/", "http://[vg.a]/",
            "http://১২৩.com/",
        ]);
    }

    #[rustfmt::skip]
    #[test]
    fn uri_reference() {
        check(Format::UriReference, &[
            "http://foo.bar/?baz=qux#quux", "//foo.bar/?baz=qux#quux", "//foo", "/abc", "abc",
            "#fragment", "http://087.10.0.1/", "http://999.999.999.999/", "", "?query=1", "//",
            "./this:that", "//[V1.fe]/p", "http://[::1]:80/a?b#c", "a/b:c", "../x", "%25",
            "#", "?", "a?b:c", "/a:b",
        ], &[
            "\\\\WINDOWS\\fileshare", "#frag\\ment", "/foobar®.txt", "https://example.org/foobar\\.txt",
            "/%zz", "/a\"b", "/[::1]", "//example.com:abc/p", "//a@b@example.com/",
            "//[::ffff:192.168.0.01]/p", "1:b", "/p\n", "%", "%2", "a b", "bar,baz:foo", "#a#b",
            ":", ":a", "//[::1", "//[1::2::3]",
        ]);
    }

    #[rustfmt::skip]
    #[test]
    fn uuid() {
        check(Format::Uuid, &[
            "2EB8AA08-AA98-11EA-B4AA-73B441D16380", "2eb8aa08-aa98-11ea-b4aa-73b441d16380",
            "2eb8aa08-AA98-11ea-B4Aa-73B441D16380", "00000000-0000-0000-0000-000000000000",
            "98d80576-482e-427f-8434-7f86890ab222", "99c17cbb-656f-564a-940f-1a4568f03487",
            "99c17cbb-656f-664a-940f-1a4568f03487", "99c17cbb-656f-f64a-940f-1a4568f03487",
        ], &[
            "", "2eb8aa08-aa98-11ea-b4aa-73b441d1638", "2eb8aa08-aa98-11ea-73b441d16380",
            "2eb8aa08-aa98-11ea-b4ga-73b441d16380", "2eb8aa08aa9811eab4aa73b441d16380",
            "2eb8aa08aa98-11ea-b4aa73b441d16380", "2eb8-aa08-aa98-11ea-b4aa73b44-1d16380",
            "2eb8aa08aa9811eab4aa73b441d16380----", "2eb8aa0-8aa98-11e-ab4aa7-3b441d16380",
            "urn:uuid:2eb8aa08-aa98-11ea-b4aa-73b441d16380", "{2eb8aa08-aa98-11ea-b4aa-73b441d16380}",
            "2eb8aa08-aa98-11ea-b4aa-73b441d16380 ", "2eb8aa08-aa98-11ea-b4aa-73b441d1638০",
        ]);
    }

    #[rustfmt::skip]
    #[test]
    fn json_pointer() {
        check(Format::JsonPointer, &[
            "", "/", "/foo/bar~0/baz~1/%a", "//", "/foo//bar", "/foo/", "/foo/-", "/~0", "/~1", "/~01",
            "/~10", "/~0~1", "/ ", "/a b", "/é", "/foo\"bar", "/0", "/~1~0",
        ], &[
            "/foo/baz~", "/foo/bar~", "/~2", "/~-1", "/~~", "#", "#/", "#a", "a", "0", "a/a", "~",
            "/~ ", "/~a", " /",
        ]);
    }

    #[rustfmt::skip]
    #[test]
    fn relative_json_pointer() {
        check(Format::RelativeJsonPointer, &[
            "1", "0/foo/bar", "2/0/baz/1/zip", "0#", "0+1", "0+1/foo", "1-2/bar", "0-0", "0-1#",
            "120/foo/bar", "100", "0//", "0", "10#", "0/", "3/~0~1",
        ], &[
            "", "/foo/bar", "1foo", "-1/foo/bar", "+1/foo/bar", "0+", "0-01", "0++1",
            "0+1not-a-pointer", "١/foo", "0##", "01/a", "01#", "0/~2", "0/foo/bar~", "1#/foo/bar",
            "1\n", "#", "00", "0+-1", "0-", "1 /a", "0#a", "+0", "৪",
        ]);
    }

    /// Every check must be total: no input may panic, however odd or long.
    #[test]
    fn odd_inputs_do_not_panic() {
        let odd = ["\u{0}", "\u{feff}", "😀", "%", "[", "]", "@", "::::", "T", "P", "-", "é@é", "\"", "\\"];
        for format in ALL {
            for s in odd {
                let _ = format.is_valid(s);
                let _ = format.is_valid(&s.repeat(1000));
            }
        }
    }
}
