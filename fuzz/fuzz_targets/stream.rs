//! Raw bytes as a reply streamed to each of the `check` target's contracts,
//! cut into pieces three ways (a byte at a time, pieces sized by the first
//! input byte, whole).
//!
//! Properties: no panic; the three refuse at the same byte with the same
//! problems; `finish` is `check`'s verdict byte for byte; a refusal is
//! `check`'s too, listing each problem the stream gave (by code and path);
//! a member shown as a validated partial is, in an accepted reply whose
//! value nothing repaired, that member's value.
#![no_main]

mod common;

use libfuzzer_sys::fuzz_target;
use vouch::{Contract, Progress, Verdict};

fn streamed(
    contract: &Contract,
    raw: &[u8],
    sizes: &[u8],
) -> (Option<usize>, Vec<vouch::Problem>, Verdict, Vec<serde_json::Value>) {
    let mut s = contract.stream();
    let mut partials = Vec::new();
    let (mut at, mut i) = (0, 0);
    while at < raw.len() {
        let len = if sizes.is_empty() { raw.len() } else { usize::from(sizes[i % sizes.len()] % 17) + 1 };
        i += 1;
        let end = (at + len).min(raw.len());
        let progress = s.feed(&raw[at..end]);
        at = end;
        if progress == Progress::Pending {
            if let Some(p) = s.partial() {
                partials.push(p);
            }
        } else {
            assert!(s.partial().is_none(), "a refused stream shows no partial");
        }
    }
    let (decided, problems) = (s.decided_at(), s.problems().to_vec());
    (decided, problems, s.finish(), partials)
}

fuzz_target!(|data: &[u8]| {
    let Some((&seed, raw)) = data.split_first() else { return };
    let sizes = [seed, seed.rotate_left(3), seed ^ 0x5a];
    for contract in common::contracts() {
        let verdict = contract.check(raw);
        let (decided, problems, bytewise, partials) = streamed(contract, raw, &[0]);
        let (d2, p2, pieces, _) = streamed(contract, raw, &sizes);
        let (d3, p3, whole, _) = streamed(contract, raw, &[]);
        assert_eq!((decided, &problems), (d2, &p2), "pieces refuse elsewhere");
        assert_eq!((decided, &problems), (d3, &p3), "whole refuses elsewhere");
        for v in [&bytewise, &pieces, &whole] {
            assert_eq!(v.to_json(), verdict.to_json(), "finish is not check's verdict");
        }
        if decided.is_some() {
            assert!(!verdict.is_accepted(), "the stream refused what check accepts");
            for p in &problems {
                assert!(
                    verdict.problems().iter().any(|v| v.code == p.code && v.path == p.path),
                    "{p} not among check's"
                );
            }
        }
        if let (Verdict::Accepted(a), true) = (&verdict, verdict.repairs().is_empty()) {
            for partial in &partials {
                if let (Some(shown), Some(value)) = (partial.as_object(), a.value().as_object()) {
                    for (k, v) in shown {
                        if !v.is_object() && !v.is_array() {
                            assert_eq!(Some(v), value.get(k), "a partial member is not the accepted one");
                        }
                    }
                }
            }
        }
    }
});
