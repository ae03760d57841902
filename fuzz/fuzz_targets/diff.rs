//! Arbitrary bytes as two contract documents (split at the first NUL byte, or
//! the bytes and a copy with one byte changed). When both compile, they are
//! compared both ways.
//!
//! Properties: no panic, no hang; every witness shown is what it says (a
//! breaking one accepted by the old contract and refused by the new, a
//! loosening one the other way); a contract compared with itself is
//! compatible with no change.
#![no_main]

use libfuzzer_sys::fuzz_target;
use vouch::{ChangeKind, Contract};

fuzz_target!(|data: &[u8]| {
    let (a, b): (Vec<u8>, Vec<u8>) = match data.iter().position(|&x| x == 0) {
        Some(at) => (data[..at].to_vec(), data[at + 1..].to_vec()),
        None => {
            let mut other = data.to_vec();
            if let Some(last) = other.last_mut() {
                *last = last.wrapping_add(1);
            }
            (data.to_vec(), other)
        }
    };
    let (Ok(a), Ok(b)) = (std::str::from_utf8(&a), std::str::from_utf8(&b)) else { return };
    let (Ok(old), Ok(new)) = (Contract::from_json_str(a), Contract::from_json_str(b)) else { return };
    assert!(old.diff(&old).changes.is_empty(), "a contract differs from itself");
    for (from, to) in [(&old, &new), (&new, &old)] {
        for c in from.diff(to).changes {
            match (c.kind, &c.witness) {
                (ChangeKind::Breaking, Some(w)) => assert!(from.check(w).is_accepted() && !to.check(w).is_accepted()),
                (ChangeKind::Loosening, Some(w)) => assert!(to.check(w).is_accepted() && !from.check(w).is_accepted()),
                (ChangeKind::Undecided, None) => {}
                _ => panic!("{c:?}"),
            }
        }
    }
});
