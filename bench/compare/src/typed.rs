//! The bench contracts as serde-derived Rust types: what a Rust user gets
//! from types alone (no ranges, no string lengths, no formats).

use serde::Deserialize;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[allow(dead_code)]
struct Plate {
    product_present: bool,
    product_text_present: bool,
    garbled_text: bool,
}

#[derive(Deserialize)]
#[serde(rename_all = "snake_case")]
enum Verdict {
    Eligible,
    Maybe,
    NotEligible,
}

#[derive(Deserialize)]
#[serde(rename_all = "snake_case")]
enum Status {
    Pass,
    Partial,
    Fail,
    Unknown,
}

#[derive(Deserialize)]
#[allow(dead_code)]
struct Criterion {
    criterion: String,
    status: Status,
    reason: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)]
struct Eligibility {
    verdict: Verdict,
    match_score: Option<i64>,
    summary: String,
    criteria: Vec<Criterion>,
    recommendations: Option<Vec<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Address {
    street: String,
    street2: Option<String>,
    city: String,
    region: Option<String>,
    #[serde(rename = "postalCode")]
    postal_code: String,
    country: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Party {
    name: String,
    attention: Option<String>,
    address: Address,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[allow(dead_code)]
struct Vendor {
    name: String,
    tax_id: Option<String>,
    email: Option<String>,
    phone: Option<String>,
    address: Address,
}

#[derive(Deserialize)]
#[serde(rename_all = "UPPERCASE")]
enum Currency {
    Usd,
    Eur,
    Gbp,
    Jpy,
    Chf,
    Cad,
    Aud,
    Sek,
}

#[derive(Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
enum Terms {
    DueOnReceipt,
    Net15,
    Net30,
    Net45,
    Net60,
}

#[derive(Deserialize)]
#[serde(rename_all = "lowercase")]
enum Unit {
    Ea,
    Box,
    Kg,
    M,
    H,
    L,
    Pack,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[allow(dead_code)]
struct LineItem {
    line_no: i64,
    sku: String,
    description: String,
    quantity: f64,
    unit: Unit,
    unit_price: f64,
    discount_pct: Option<f64>,
    tax_rate: f64,
    amount: f64,
    service_date: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[allow(dead_code)]
struct Totals {
    subtotal: f64,
    discount_total: Option<f64>,
    tax_total: f64,
    shipping_total: Option<f64>,
    grand_total: f64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[allow(dead_code)]
struct Invoice {
    invoice_number: String,
    purchase_order: Option<String>,
    vendor: Vendor,
    bill_to: Party,
    ship_to: Option<Party>,
    issue_date: String,
    due_date: Option<String>,
    currency: Currency,
    payment_terms: Option<Terms>,
    line_items: Vec<LineItem>,
    totals: Totals,
    notes: Option<String>,
}

/// Whether the reply deserializes into the contract's Rust type.
pub fn accepts(contract: &str, raw: &str) -> bool {
    match contract {
        "plate_check" => serde_json::from_str::<Plate>(raw).is_ok(),
        "eligibility_verdict" => serde_json::from_str::<Eligibility>(raw).is_ok(),
        "invoice_extraction" => serde_json::from_str::<Invoice>(raw).is_ok(),
        _ => false,
    }
}
