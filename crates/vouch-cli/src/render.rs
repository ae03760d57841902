//! Human output for verdicts.

use std::fmt::Write;

use vouch::Verdict;

/// The exit code a verdict means: 0 pass, 1 refused, 3 accepted with findings.
pub fn exit_code(verdict: &Verdict) -> u8 {
    match verdict {
        Verdict::Refused(_) => 1,
        Verdict::Accepted(a) if a.findings.is_empty() => 0,
        Verdict::Accepted(_) => 3,
    }
}

/// A verdict as a person reads it: the outcome first, then every problem,
/// repair and finding on its own line.
pub fn human(verdict: &Verdict) -> String {
    let mut out = String::new();
    match verdict {
        Verdict::Refused(r) => {
            let why = match r.class() {
                vouch::ProblemClass::NoAnswer => "the model did not answer",
                vouch::ProblemClass::BadAnswer => "the answer is outside the contract",
            };
            let _ = writeln!(out, "refused ({}): {why}", r.class().as_str());
            for p in &r.problems {
                let _ = writeln!(out, "  {:<20} {}", p.code.as_str(), p.message);
            }
        }
        Verdict::Accepted(a) => {
            if a.findings.is_empty() {
                let _ = writeln!(out, "accepted: pass");
            } else {
                let n = a.findings.len();
                let _ = writeln!(
                    out,
                    "accepted with {n} finding{}: the model answered, and the answer fails the gate",
                    if n == 1 { "" } else { "s" }
                );
            }
            for f in &a.findings {
                let _ =
                    writeln!(out, "  finding  {}: {}", if f.path.is_empty() { "(root)" } else { &f.path }, f.message);
            }
            for r in &a.repairs {
                let _ = writeln!(out, "  repaired {:<18} {}", r.rule, r.message);
            }
            let _ = writeln!(out, "{}", vouch::to_json_pretty(a.value()));
        }
    }
    out
}
