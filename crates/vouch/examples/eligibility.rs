//! The eligibility verdict as a typed contract, with declared repairs on the
//! cosmetic fields and none on the decision.
//!
//! Run: `cargo run -p vouch --example eligibility`

use schemars::JsonSchema;
use serde::Deserialize;
use vouch::Contract;

/// The decision: refused when wrong, never repaired.
#[derive(Debug, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    /// The student is eligible.
    Eligible,
    /// It depends on something the model could not see.
    Maybe,
    /// The student is not eligible.
    NotEligible,
}

/// How one criterion went.
#[derive(Debug, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Met.
    Pass,
    /// Partly met.
    Partial,
    /// Not met.
    Fail,
    /// The model could not tell (better than a guess).
    Unknown,
}

/// One criterion of the verdict.
#[derive(Debug, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Criterion {
    /// The criterion's name.
    #[schemars(length(min = 1))]
    pub criterion: String,
    /// The decision on it.
    pub status: Status,
    /// Why; cosmetic, so a missing or invalid reason becomes "".
    #[schemars(extend("x-vouch" = {"repair": ["default_if_invalid"], "default": ""}))]
    pub reason: String,
}

/// The model's eligibility verdict, as shown to a student.
#[derive(Debug, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EligibilityVerdict {
    /// The decision.
    pub verdict: Decision,
    /// A 0–100 score; cosmetic, so repaired where declared.
    #[schemars(range(min = 0, max = 100), extend("x-vouch" = {"repair": ["coerce", "round", "clamp", "default_if_invalid"], "default": 0}))]
    pub match_score: u8,
    /// A summary for the student; white space trimmed, then it must not be empty.
    #[schemars(length(min = 1), extend("x-vouch" = {"repair": ["trim"]}))]
    pub summary: String,
    /// Each criterion.
    pub criteria: Vec<Criterion>,
    /// Tips; invalid items dropped, an invalid list becomes [].
    #[schemars(extend("x-vouch" = {"repair": ["drop_invalid_items", "default_if_invalid"], "default": []}))]
    pub recommendations: Vec<String>,
}

/// Checks a messy but acceptable reply and a wrong one.
pub fn main() -> Result<(), Box<dyn std::error::Error>> {
    let contract = Contract::of::<EligibilityVerdict>()?;

    let messy = r#"{"verdict": "eligible", "matchScore": "105", "summary": "  Meets every requirement. ",
        "criteria": [{"criterion": "residency", "status": "pass"}], "recommendations": [1, "Bring a transcript", null]}"#;
    let vouched = contract.check_as::<EligibilityVerdict>(messy).map_err(|r| format!("{:?}", r.problems))?;
    assert_eq!(vouched.value.match_score, 100);
    assert_eq!(vouched.value.summary, "Meets every requirement.");
    assert!(vouched.value.criteria.iter().all(|c| c.reason.is_empty()));
    assert_eq!(vouched.value.recommendations, ["Bring a transcript"]);
    for repair in &vouched.repairs {
        println!("repaired: {}", repair.message);
    }

    let wrong = r#"{"verdict": "likely", "matchScore": 80, "summary": "ok", "criteria": [], "recommendations": []}"#;
    let refused = contract.check_as::<EligibilityVerdict>(wrong).err().ok_or("an invented verdict was accepted")?;
    assert!(refused.problems.iter().any(|p| p.path == "/verdict"));
    for problem in &refused.problems {
        println!("refused: {problem}");
    }
    Ok(())
}
