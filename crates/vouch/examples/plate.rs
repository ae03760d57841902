//! The plate read-back gate as a typed contract.
//!
//! A vision model answers three yes/no questions about a photo. Each answer
//! must be a real boolean (`{}`, `"no"` or `null` is no answer, and is
//! refused); a `true` answer is a gate finding, not a refusal.
//!
//! Run: `cargo run -p vouch --example plate`

use schemars::JsonSchema;
use serde::Deserialize;
use vouch::Contract;

/// What the model reads back from the photo.
#[derive(Debug, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PlateReadBack {
    /// Is any product still in frame?
    #[schemars(extend("x-vouch" = {"findings": [{"when": {"const": true}, "message": "a product is still in frame"}]}))]
    pub product_present: bool,
    /// Is any product text still readable?
    #[schemars(extend("x-vouch" = {"findings": [{"when": {"const": true}, "message": "product text is still readable"}]}))]
    pub product_text_present: bool,
    /// Is there garbled text on the plate?
    #[schemars(extend("x-vouch" = {"findings": [{"when": {"const": true}, "message": "the plate shows garbled text"}]}))]
    pub garbled_text: bool,
}

/// Runs the gate over a few replies and shows the three outcomes.
pub fn main() -> Result<(), Box<dyn std::error::Error>> {
    let contract = Contract::of::<PlateReadBack>()?;

    let clean = contract
        .check_as::<PlateReadBack>(r#"{"productPresent":false,"productTextPresent":false,"garbledText":false}"#);
    let clean = clean.map_err(|r| format!("{:?}", r.problems))?;
    assert!(clean.findings.is_empty());
    println!("pass: {:?}", clean.value);

    let dirty =
        contract.check_as::<PlateReadBack>(r#"{"productPresent":true,"productTextPresent":false,"garbledText":false}"#);
    let dirty = dirty.map_err(|r| format!("{:?}", r.problems))?;
    assert_eq!(dirty.findings.len(), 1);
    for finding in &dirty.findings {
        println!("finding: {} at {}", finding.message, finding.path);
    }

    for reply in ["{}", "true", r#"{"productPresent":"no","productTextPresent":false,"garbledText":false}"#] {
        let refused = contract.check_as::<PlateReadBack>(reply).err().ok_or("a non-answer was accepted")?;
        assert_eq!(refused.class(), vouch::ProblemClass::NoAnswer);
        for problem in &refused.problems {
            println!("refused {reply}: {problem}");
        }
    }
    Ok(())
}
