//! `POST /v1/check`: one reply against a contract, without a model:
//! `{"contract": NAME | "document": SCHEMA, "reply": TEXT}` → exactly the
//! object `vouch check --json` prints.

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::http::StatusCode;
use axum::response::Response;
use serde_json::Value;
use vouch::Contract;

use crate::reply::{error, json_response};
use crate::Gateway;

fn bad(g: &Gateway, code: &str, message: &str) -> Response {
    error(StatusCode::BAD_REQUEST, "invalid_request_error", code, message, &g.scrub)
}

/// Check one reply.
pub fn check(g: &Gateway, body: Result<Bytes, BytesRejection>) -> Response {
    let req = match g.request_object(body) {
        Ok(o) => o,
        Err(r) => return *r,
    };
    let Some(reply) = req.get("reply").and_then(Value::as_str) else {
        return bad(g, "invalid_body", "reply must be the reply's text (a string)");
    };
    let verdict = match (req.get("contract"), req.get("document")) {
        (Some(Value::String(name)), None) => match g.catalog().named.get(name) {
            Some(e) => e.asker.contract().check(reply),
            None => {
                return error(
                    StatusCode::NOT_FOUND,
                    "invalid_request_error",
                    "unknown_contract",
                    "no contract of that name (GET /v1/contracts lists them)",
                    &g.scrub,
                )
            }
        },
        (None, Some(doc)) => match Contract::from_value(doc.clone()) {
            Ok(c) => c.check(reply),
            Err(e) => {
                let all: Vec<String> = e.every().map(ToString::to_string).collect();
                return bad(
                    g,
                    "contract_invalid",
                    &format!("the document is not a contract vouch can enforce: {}", all.join("; ")),
                );
            }
        },
        _ => return bad(g, "invalid_body", "give exactly one of contract (a name) or document (a JSON Schema)"),
    };
    json_response(StatusCode::OK, &verdict.to_json(), &g.scrub)
}
