//! The bench contracts as serde-derived Rust types: what a Rust user gets
//! from types alone (no ranges, no string lengths, no formats). One file,
//! included by `bench/compare` (vouch's `check_as::<T>`) and by
//! `bench/baseline` (serde_json's `from_value::<T>` and `from_slice::<T>`),
//! so both sides build the very same types.

use serde::Deserialize;

#[derive(Debug, PartialEq, Deserialize)]
#[allow(dead_code)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Plate {
    product_present: bool,
    product_text_present: bool,
    garbled_text: bool,
}

#[derive(Debug, PartialEq, Deserialize)]
#[allow(dead_code)]
#[serde(rename_all = "snake_case")]
enum Verdict {
    Eligible,
    Maybe,
    NotEligible,
}

#[derive(Debug, PartialEq, Deserialize)]
#[allow(dead_code)]
#[serde(rename_all = "snake_case")]
enum Status {
    Pass,
    Partial,
    Fail,
    Unknown,
}

#[derive(Debug, PartialEq, Deserialize)]
#[allow(dead_code)]
struct Criterion {
    criterion: String,
    status: Status,
    reason: String,
}

#[derive(Debug, PartialEq, Deserialize)]
#[allow(dead_code)]
#[serde(rename_all = "camelCase")]
pub struct Eligibility {
    verdict: Verdict,
    match_score: Option<i64>,
    summary: String,
    criteria: Vec<Criterion>,
    recommendations: Option<Vec<String>>,
}

#[derive(Debug, PartialEq, Deserialize)]
#[allow(dead_code)]
#[serde(deny_unknown_fields)]
struct Address {
    street: String,
    street2: Option<String>,
    city: String,
    region: Option<String>,
    #[serde(rename = "postalCode")]
    postal_code: String,
    country: String,
}

#[derive(Debug, PartialEq, Deserialize)]
#[allow(dead_code)]
#[serde(deny_unknown_fields)]
struct Party {
    name: String,
    attention: Option<String>,
    address: Address,
}

#[derive(Debug, PartialEq, Deserialize)]
#[allow(dead_code)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Vendor {
    name: String,
    tax_id: Option<String>,
    email: Option<String>,
    phone: Option<String>,
    address: Address,
}

#[derive(Debug, PartialEq, Deserialize)]
#[allow(dead_code)]
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

#[derive(Debug, PartialEq, Deserialize)]
#[allow(dead_code)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
enum Terms {
    DueOnReceipt,
    Net15,
    Net30,
    Net45,
    Net60,
}

#[derive(Debug, PartialEq, Deserialize)]
#[allow(dead_code)]
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

#[derive(Debug, PartialEq, Deserialize)]
#[allow(dead_code)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
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

#[derive(Debug, PartialEq, Deserialize)]
#[allow(dead_code)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Totals {
    subtotal: f64,
    discount_total: Option<f64>,
    tax_total: f64,
    shipping_total: Option<f64>,
    grand_total: f64,
}

#[derive(Debug, PartialEq, Deserialize)]
#[allow(dead_code)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Invoice {
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
