//! The formats of the schema generators users hold their contracts in —
//! Pydantic, Zod 4, OpenAPI — each asserted by its documented definition,
//! and never looser than the tool that emits it (a value vouch accepts,
//! the tool accepts too; see docs/sources.md). Single passes, no allocation
//! but JWT's header.

use super::{is_ipv4, is_ipv6, is_uuid};

/// The encodings of a fixed-size digest (Zod's `z.hash`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DigestEncoding {
    /// Hexadecimal, either case.
    Hex,
    /// RFC 4648 base64, padded.
    Base64,
    /// RFC 4648 base64url, unpadded.
    Base64Url,
}

/// A digest algorithm's length in bytes, by its name in Zod's formats.
pub(super) fn digest_bytes(name: &str) -> Option<u8> {
    Some(match name {
        "md5" => 16,
        "sha1" => 20,
        "sha256" => 32,
        "sha384" => 48,
        "sha512" => 64,
        _ => return None,
    })
}

/// The format name of a digest, e.g. `sha256_hex`.
pub(super) fn digest_name(bytes: u8, encoding: DigestEncoding) -> &'static str {
    use DigestEncoding::{Base64, Base64Url, Hex};
    match (bytes, encoding) {
        (16, Hex) => "md5_hex",
        (16, Base64) => "md5_base64",
        (16, Base64Url) => "md5_base64url",
        (20, Hex) => "sha1_hex",
        (20, Base64) => "sha1_base64",
        (20, Base64Url) => "sha1_base64url",
        (32, Hex) => "sha256_hex",
        (32, Base64) => "sha256_base64",
        (32, Base64Url) => "sha256_base64url",
        (48, Hex) => "sha384_hex",
        (48, Base64) => "sha384_base64",
        (48, Base64Url) => "sha384_base64url",
        (64, Hex) => "sha512_hex",
        (64, Base64) => "sha512_base64",
        _ => "sha512_base64url",
    }
}

/// A digest of `bytes` bytes in `encoding`, exactly that long.
pub(super) fn is_digest(s: &str, bytes: u8, encoding: DigestEncoding) -> bool {
    let bytes = usize::from(bytes);
    match encoding {
        DigestEncoding::Hex => s.len() == 2 * bytes && is_hex(s),
        // The padding is the digest's: `==` after 16 bytes (MD5), `=` after
        // 20 or 32, none after 48; another says another byte count.
        DigestEncoding::Base64 => {
            let pad = s.bytes().rev().take_while(|b| *b == b'=').count();
            s.len() == bytes.div_ceil(3) * 4 && pad == (3 - bytes % 3) % 3 && is_base64(s)
        }
        DigestEncoding::Base64Url => s.len() == (bytes * 4).div_ceil(3) && is_base64url_unpadded(s),
    }
}

pub(super) fn is_hex(s: &str) -> bool {
    s.bytes().all(|b| b.is_ascii_hexdigit())
}

fn is_base64_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'+' || b == b'/'
}

fn is_base64url_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'-' || b == b'_'
}

/// RFC 4648 §4 base64 with its padding: groups of four, `=` only to fill
/// the last (Zod's, Python's and OpenAPI's `byte` agree on padding).
pub(super) fn is_base64(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() % 4 != 0 {
        return false;
    }
    let pad = b.iter().rev().take_while(|c| **c == b'=').count();
    pad <= 2 && b.iter().take(b.len() - pad).all(|c| is_base64_char(*c))
}

/// RFC 4648 §5 base64url as Zod writes it: no padding, no length that no
/// byte string encodes to (one character past a group).
pub(super) fn is_base64url_unpadded(s: &str) -> bool {
    s.len() % 4 != 1 && s.bytes().all(is_base64url_char)
}

/// RFC 4648 §5 base64url, unpadded (JWT, Zod) or padded (Python).
pub(super) fn is_base64url(s: &str) -> bool {
    let b = s.as_bytes();
    let pad = b.iter().rev().take_while(|c| **c == b'=').count();
    if pad == 0 {
        return is_base64url_unpadded(s);
    }
    b.len() % 4 == 0 && pad <= 2 && b.iter().take(b.len() - pad).all(|c| is_base64url_char(*c))
}

/// A UUID of one version (Pydantic's `UUID1`…`UUID8`), with the RFC 4122
/// variant: Python's `uuid.UUID.version` is set only for that variant.
pub(super) fn is_uuid_version(s: &str, version: u8) -> bool {
    let b = s.as_bytes();
    is_uuid(s)
        && b.get(14).is_some_and(|c| *c == b'0' + version)
        && b.get(19).is_some_and(|c| matches!(c, b'8' | b'9' | b'a' | b'b' | b'A' | b'B'))
}

/// A prefix length after `/`: decimal, no leading zero, at most `max`.
fn prefix_len(s: &str, max: u32) -> Option<u32> {
    if s.is_empty() || s.len() > 3 || !s.bytes().all(|b| b.is_ascii_digit()) || (s.len() > 1 && s.starts_with('0')) {
        return None;
    }
    s.parse::<u32>().ok().filter(|n| *n <= max)
}

/// Which addresses an IP format admits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum IpFamily {
    /// IPv4 only.
    V4,
    /// IPv6 only.
    V6,
    /// Either.
    Any,
}

fn address_of(s: &str, family: IpFamily) -> Option<u32> {
    match family {
        IpFamily::V4 if is_ipv4(s) => Some(32),
        IpFamily::V6 if is_ipv6(s) => Some(128),
        IpFamily::Any if is_ipv4(s) => Some(32),
        IpFamily::Any if is_ipv6(s) => Some(128),
        _ => None,
    }
}

/// An address with a prefix length (Zod's `cidrv4`/`cidrv6`).
pub(super) fn is_cidr(s: &str, family: IpFamily) -> bool {
    s.split_once('/').is_some_and(|(a, p)| address_of(a, family).is_some_and(|max| prefix_len(p, max).is_some()))
}

/// An interface (Python's `ip_interface`): an address, optionally with a
/// prefix length; the host bits may be set.
pub(super) fn is_interface(s: &str, family: IpFamily) -> bool {
    match s.split_once('/') {
        Some(_) => is_cidr(s, family),
        None => address_of(s, family).is_some(),
    }
}

/// A network (Python's `ip_network`, strict): an address, optionally with a
/// prefix length, and no host bit set past the prefix.
pub(super) fn is_network(s: &str, family: IpFamily) -> bool {
    let Some((address, prefix)) = s.split_once('/') else {
        return address_of(s, family).is_some();
    };
    let Some(max) = address_of(address, family) else { return false };
    let Some(len) = prefix_len(prefix, max) else { return false };
    let Ok(ip) = address.parse::<std::net::IpAddr>() else { return false };
    let bits: u128 = match ip {
        std::net::IpAddr::V4(v4) => u128::from(u32::from(v4)),
        std::net::IpAddr::V6(v6) => u128::from(v6),
    };
    // All 128 bits are host bits for `::/0`: a shift by 128 would overflow.
    let host_mask = 1u128.checked_shl(max - len).map_or(u128::MAX, |b| b - 1);
    bits & host_mask == 0
}

/// Zod's `cuid`: `c`, then six or more lower-case letters or digits.
pub(super) fn is_cuid(s: &str) -> bool {
    let b = s.as_bytes();
    matches!(b.first(), Some(b'c' | b'C'))
        && b.len() >= 7
        && b.iter().skip(1).all(|c| c.is_ascii_digit() || c.is_ascii_lowercase())
}

/// Zod's `cuid2`: one or more lower-case letters or digits.
pub(super) fn is_cuid2(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|c| c.is_ascii_digit() || c.is_ascii_lowercase())
}

/// A ULID: 26 Crockford base32 characters (no I, L, O, U), the first at most 7.
pub(super) fn is_ulid(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 26
        && matches!(b.first(), Some(b'0'..=b'7'))
        && b.iter().all(|c| c.is_ascii_alphanumeric() && !matches!(c.to_ascii_uppercase(), b'I' | b'L' | b'O' | b'U'))
}

/// A nanoid: 21 characters of `A-Za-z0-9_-`.
pub(super) fn is_nanoid(s: &str) -> bool {
    s.len() == 21 && s.bytes().all(is_base64url_char)
}

/// An xid: 20 base32hex characters (`0-9a-v`, either case).
pub(super) fn is_xid(s: &str) -> bool {
    s.len() == 20 && s.bytes().all(|c| c.is_ascii_digit() || matches!(c.to_ascii_lowercase(), b'a'..=b'v'))
}

/// A KSUID: 27 base62 characters.
pub(super) fn is_ksuid(s: &str) -> bool {
    s.len() == 27 && s.bytes().all(|c| c.is_ascii_alphanumeric())
}

/// An E.164 phone number: `+`, a non-zero digit, then 6 to 14 digits.
pub(super) fn is_e164(s: &str) -> bool {
    let b = s.as_bytes();
    matches!(b, [b'+', b'1'..=b'9', ..]) && (8..=16).contains(&b.len()) && b.iter().skip(2).all(u8::is_ascii_digit)
}

/// A JSON Web Token as Zod 4 checks one: three dot-separated parts whose
/// first is a base64 JSON object with a truthy `alg` and, when present,
/// `"typ": "JWT"`. vouch is stricter where Zod's `atob` would be lenient
/// (the header must be ASCII JSON with no repeated key).
pub(super) fn is_jwt(s: &str) -> bool {
    let mut parts = s.split('.');
    let (Some(header), Some(_), Some(_), None) = (parts.next(), parts.next(), parts.next(), parts.next()) else {
        return false;
    };
    if header.is_empty() || header.len() > 8192 {
        return false;
    }
    let Some(bytes) = decode_base64_forgiving(header) else { return false };
    let Ok(text) = String::from_utf8(bytes) else { return false };
    if !text.is_ascii() {
        return false;
    }
    let Ok(serde_json::Value::Object(map)) = crate::read_json(&text, 16) else { return false };
    let truthy = |v: &serde_json::Value| match v {
        serde_json::Value::Null => false,
        serde_json::Value::Bool(b) => *b,
        serde_json::Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
        serde_json::Value::String(s) => !s.is_empty(),
        _ => true,
    };
    map.get("alg").is_some_and(truthy) && map.get("typ").is_none_or(|t| t.as_str() == Some("JWT"))
}

/// Standard-alphabet base64 with the padding optional (as `atob` reads it).
fn decode_base64_forgiving(s: &str) -> Option<Vec<u8>> {
    let body = s.trim_end_matches('=');
    if s.len() - body.len() > 2 || body.len() % 4 == 1 || (s.len() != body.len() && s.len() % 4 != 0) {
        return None;
    }
    let value = |c: u8| -> Option<u32> {
        Some(u32::from(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        }))
    };
    let mut out = Vec::with_capacity(body.len() * 3 / 4);
    for chunk in body.as_bytes().chunks(4) {
        let mut acc = 0u32;
        for c in chunk {
            acc = (acc << 6) | value(*c)?;
        }
        acc <<= 6 * (4 - chunk.len() as u32);
        let bytes = acc.to_be_bytes();
        out.extend(bytes.iter().skip(1).take(chunk.len().saturating_sub(1)));
    }
    Some(out)
}

/// A MAC address as Zod 4 checks one: six pairs of hex digits, all of one
/// case, joined by one delimiter (`:`, `-` or `.`; Zod's pattern beside it
/// names which).
pub(super) fn is_mac(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() != 17 {
        return false;
    }
    let Some(&delimiter) = b.get(2) else { return false };
    if !matches!(delimiter, b':' | b'-' | b'.') {
        return false;
    }
    let upper = b.iter().any(u8::is_ascii_uppercase);
    let lower = b.iter().any(u8::is_ascii_lowercase);
    !(upper && lower)
        && b.iter().enumerate().all(|(i, c)| if i % 3 == 2 { *c == delimiter } else { c.is_ascii_hexdigit() })
}

/// A payment card number as Zod 4 checks one: 12 to 19 digits, single
/// spaces or hyphens between them allowed, and the Luhn checksum.
pub(super) fn is_credit_card(s: &str) -> bool {
    let b = s.as_bytes();
    let mut digits = Vec::with_capacity(19);
    let mut last_was_separator = true;
    for c in b {
        match c {
            b'0'..=b'9' => {
                digits.push(c - b'0');
                last_was_separator = false;
            }
            b' ' | b'-' if !last_was_separator => last_was_separator = true,
            _ => return false,
        }
        if digits.len() > 19 {
            return false;
        }
    }
    if last_was_separator || digits.len() < 12 {
        return false;
    }
    let sum: u32 = digits
        .iter()
        .rev()
        .enumerate()
        .map(|(i, d)| {
            let d = u32::from(*d);
            if i % 2 == 1 {
                let twice = d * 2;
                if twice > 9 {
                    twice - 9
                } else {
                    twice
                }
            } else {
                d
            }
        })
        .sum();
    sum % 10 == 0
}

/// An IBAN in electronic form as Zod 4 checks one: a two-letter country,
/// check digits 02–98, 11 to 30 letters or digits, and ISO 7064 mod 97-10.
pub(super) fn is_iban(s: &str) -> bool {
    let b = s.as_bytes();
    let shape = (15..=34).contains(&b.len())
        && b.iter().take(2).all(u8::is_ascii_uppercase)
        && b.iter().skip(2).take(2).all(u8::is_ascii_digit)
        && !matches!(b.get(2..4), Some(b"00" | b"01" | b"99"))
        && b.iter().skip(4).all(|c| c.is_ascii_uppercase() || c.is_ascii_digit());
    if !shape {
        return false;
    }
    let mut remainder = 0u32;
    for c in b.iter().skip(4).chain(b.iter().take(4)) {
        remainder = if c.is_ascii_uppercase() {
            (remainder * 100 + u32::from(c - b'A' + 10)) % 97
        } else {
            (remainder * 10 + u32::from(c - b'0')) % 97
        };
    }
    remainder == 1
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn identifiers() {
        assert!(is_cuid("cjld2cjxh0000qzrmn831i7rn") && !is_cuid("cABCDEFG") && !is_cuid("c12345"));
        assert!(is_cuid2("tz4a98xxat96iws9zmbrgj3a") && !is_cuid2("") && !is_cuid2("Tz4"));
        assert!(is_ulid("01ARZ3NDEKTSV4RRFFQ69G5FAV") && !is_ulid("81ARZ3NDEKTSV4RRFFQ69G5FAV"));
        assert!(!is_ulid("01ARZ3NDEKTSV4RRFFQ69G5FAI"));
        assert!(is_nanoid("V1StGXR8_Z5jdHi6B-myT") && !is_nanoid("V1StGXR8_Z5jdHi6B-my"));
        assert!(is_xid("9m4e2mr0ui3e8a215n4g") && !is_xid("9m4e2mr0ui3e8a215n4w"));
        assert!(is_ksuid("0ujtsYcgvSTl8PAuAdqWYSMnLOv") && !is_ksuid("0ujtsYcgvSTl8PAuAdqWYSMnLO"));
        assert!(is_e164("+14155552671") && !is_e164("14155552671") && !is_e164("+0415555") && !is_e164("+1234"));
    }

    #[test]
    fn encodings_and_digests() {
        assert!(is_base64("") && is_base64("YQ==") && is_base64("YWI=") && is_base64("YWJj"));
        assert!(!is_base64("YQ") && !is_base64("Y===") && !is_base64("YW=j") && !is_base64("YW-_"));
        assert!(is_base64url("YQ") && is_base64url("YQ==") && is_base64url("-_8") && !is_base64url("Y"));
        assert!(!is_base64url("YQ=") && !is_base64url("a+b/"));
        let sha = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
        assert!(is_digest(sha, 32, DigestEncoding::Hex) && !is_digest(&sha[1..], 32, DigestEncoding::Hex));
        assert!(is_digest("47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=", 32, DigestEncoding::Base64));
        assert!(is_digest("47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU", 32, DigestEncoding::Base64Url));
        assert!(is_digest("1B2M2Y8AsgTpgAmY7PhCfg==", 16, DigestEncoding::Base64));
    }

    #[test]
    fn uuid_versions() {
        assert!(is_uuid_version("9b2e4d3a-1c2b-4d5e-8f60-718293a4b5c6", 4));
        assert!(!is_uuid_version("9b2e4d3a-1c2b-4d5e-8f60-718293a4b5c6", 1));
        assert!(!is_uuid_version("9b2e4d3a-1c2b-4d5e-cf60-718293a4b5c6", 4), "not the RFC 4122 variant");
    }

    #[test]
    fn networks() {
        assert!(is_cidr("10.0.0.0/8", IpFamily::V4) && is_cidr("10.1.2.3/8", IpFamily::V4));
        assert!(!is_cidr("10.0.0.0/33", IpFamily::V4) && !is_cidr("10.0.0.0/08", IpFamily::V4));
        assert!(!is_cidr("10.0.0.0", IpFamily::V4) && is_cidr("2001:db8::/32", IpFamily::V6));
        assert!(is_network("10.0.0.0/8", IpFamily::Any) && !is_network("10.1.0.0/8", IpFamily::Any));
        assert!(is_network("10.1.2.3", IpFamily::V4) && is_network("2001:db8::/32", IpFamily::Any));
        assert!(!is_network("2001:db8::1/32", IpFamily::V6) && is_network("::/0", IpFamily::V6));
        assert!(is_interface("10.1.2.3/8", IpFamily::V4) && is_interface("::1", IpFamily::Any));
        assert!(!is_interface("::1", IpFamily::V4));
    }

    #[test]
    fn payments_and_macs() {
        assert!(is_credit_card("4111111111111111") && is_credit_card("4111 1111 1111 1111"));
        assert!(!is_credit_card("4111111111111112") && !is_credit_card("4111  1111 1111 1111"));
        assert!(!is_credit_card("41111111111") && !is_credit_card("4111-1111-1111-1111-"));
        assert!(is_iban("GB82WEST12345698765432") && !is_iban("GB82WEST12345698765433"));
        assert!(!is_iban("gb82WEST12345698765432") && !is_iban("GB00WEST12345698765432"));
        assert!(is_mac("00:1A:2B:3C:4D:5E") && is_mac("00-1a-2b-3c-4d-5e"));
        assert!(!is_mac("00:1a:2B:3c:4d:5e") && !is_mac("00:1A-2B:3C:4D:5E") && !is_mac("001A2B3C4D5E"));
    }

    #[test]
    fn jwts() {
        // {"alg":"HS256","typ":"JWT"}
        let t = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxIn0.sig";
        assert!(is_jwt(t));
        // {"alg":"HS256","typ":"JWS"} and {"typ":"JWT"}
        assert!(!is_jwt("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXUyJ9.e30.x"));
        assert!(!is_jwt("eyJ0eXAiOiJKV1QifQ.e30.x"));
        assert!(!is_jwt("a.b") && !is_jwt(".e30.x") && !is_jwt("eyJhbGciOiJIUzI1NiJ9.a.b.c"));
        assert!(is_jwt("eyJhbGciOiJIUzI1NiJ9.e30."));
    }
}
