//! Reading a chat completion body, and judging it: no reply the contract
//! can judge is an [`UpstreamProblem`]; a reply goes to the contract.

use serde_json::Value;
use vouch::{Accepted, Contract, Verdict};

use crate::outcome::Usage;
use crate::problem::{AskProblem, UpstreamCode, UpstreamProblem};
use crate::scrub::{excerpt, Scrubber, REDACTED};

/// Longest excerpt of upstream text kept in a problem, in characters.
pub(crate) const EXCERPT: usize = 200;
/// Longest excerpt of a model reply kept in a problem, in characters.
const REPLY_EXCERPT: usize = 80;

/// What one chat completion said.
#[derive(Debug, Default)]
pub(crate) struct Completion {
    pub content: Option<String>,
    pub refusal: Option<String>,
    /// The names of the tools called (empty names for nameless calls).
    pub tool_calls: Option<Vec<String>>,
    pub reasoning: Option<String>,
    pub finish_reason: Option<String>,
    pub usage: Option<Usage>,
    /// Where the API key is in the body, when it is (then every other
    /// field but `usage` is empty: nothing of the reply goes further).
    pub secret: Option<String>,
}

/// The deepest nesting read in a completion body (a completion nests about
/// 6 deep; `logprobs` a little more).
const MAX_DEPTH: usize = 64;

fn not_a_completion(sentence: &str, got: String) -> UpstreamProblem {
    UpstreamProblem::new(
        UpstreamCode::NotACompletion,
        "a chat completion (JSON with choices[0].message)",
        got,
        &format!("not a chat completion: {sentence}"),
    )
}

/// Read a 2xx body as a chat completion, with vouch's strict reader (no
/// repeated key anywhere, RFC 8259 only, bounded depth): serde_json would
/// keep the last of two `"content"` keys, and a reply read two ways is no
/// reply vouch can vouch for.
///
/// A body that holds the API key is a completion with only `secret` (and
/// `usage`) set: looked for in the raw body, in every form the scrubber
/// covers (JSON escapes included, so in every decoded string), and in every
/// decoded key and string value, before anything else is read from it.
pub(crate) fn parse(body: &[u8], scrub: &Scrubber) -> Result<Completion, UpstreamProblem> {
    let shown = || excerpt(&scrub.scrub(&String::from_utf8_lossy(body)), EXCERPT);
    let read = match std::str::from_utf8(body) {
        Ok(text) => vouch::read_json(text, MAX_DEPTH).map_err(Some),
        Err(_) => Err(None),
    };
    let doc = match read {
        Ok(doc) => {
            if let Some(place) = secret_place(&doc, scrub) {
                let usage = doc.get("usage").map(Usage::from_json);
                return Ok(Completion { usage, secret: Some(place), ..Completion::default() });
            }
            if scrub.holds_secret(body) {
                let usage = doc.get("usage").map(Usage::from_json);
                return Ok(Completion { usage, secret: Some("the body".to_owned()), ..Completion::default() });
            }
            doc
        }
        Err(_) if scrub.holds_secret(body) => {
            return Ok(Completion { secret: Some("the body (not JSON)".to_owned()), ..Completion::default() });
        }
        Err(None) => return Err(not_a_completion("the upstream's 2xx body is not UTF-8 text", shown())),
        Err(Some(e)) if e.code == vouch::ProblemCode::DuplicateKey => {
            let name = e.path.rsplit('/').next().unwrap_or_default().replace("~1", "/").replace("~0", "~");
            let at = if e.path.is_empty() { "(root)".to_owned() } else { e.path.clone() };
            let sentence = format!(
                "the body repeats the key {:?} at {} (a reader keeps the first or the last: the reply is ambiguous); {}",
                excerpt(&scrub.scrub(&name), 60),
                excerpt(&scrub.scrub(&at), 120),
                scrub.scrub(&e.message)
            );
            return Err(not_a_completion(&sentence, shown()));
        }
        Err(Some(e)) => {
            let sentence =
                format!("the upstream's 2xx body is not JSON: {}", excerpt(&scrub.scrub(&e.message), EXCERPT));
            return Err(not_a_completion(&sentence, shown()));
        }
    };
    let usage = doc.get("usage").map(Usage::from_json);
    let choices = doc.get("choices").and_then(Value::as_array).map(Vec::as_slice);
    let choice = match choices.map(the_choice) {
        Some(Ok(choice)) => choice,
        Some(Err(why)) => return Err(not_a_completion(&format!("the body {why}"), shown())),
        None => None,
    };
    let Some(message) = choice.and_then(|c| c.get("message")).filter(|m| m.is_object()) else {
        if let Some(err) = doc.get("error") {
            let said = err.get("message").and_then(Value::as_str).map_or_else(|| err.to_string(), str::to_owned);
            let said = excerpt(&scrub.scrub(&said), EXCERPT);
            return Err(not_a_completion(&format!("the upstream answered 2xx with an error: {said}"), shown()));
        }
        return Err(not_a_completion("the body has no choices[0].message", shown()));
    };
    let finish_reason = choice.and_then(|c| c.get("finish_reason")).and_then(Value::as_str).map(str::to_owned);
    let content = match message.get("content") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        // Some servers send content as parts: [{"type": "text", "text": …}].
        Some(Value::Array(parts)) => {
            let mut text = String::new();
            for part in parts {
                match part.get("text").and_then(Value::as_str) {
                    Some(t) => text.push_str(t),
                    None => {
                        return Err(not_a_completion("choices[0].message.content has a part that is not text", shown()))
                    }
                }
            }
            Some(text)
        }
        Some(other) => {
            let kind = match other {
                Value::Bool(_) => "a boolean",
                Value::Number(_) => "a number",
                _ => "an object",
            };
            return Err(not_a_completion(&format!("choices[0].message.content is {kind}, not text"), shown()));
        }
    };
    let refusal = message.get("refusal").and_then(Value::as_str).filter(|r| !r.trim().is_empty()).map(str::to_owned);
    let mut tool_calls: Option<Vec<String>> = match message.get("tool_calls") {
        Some(Value::Array(calls)) if !calls.is_empty() => Some(
            calls
                .iter()
                .map(|c| c.get("function").and_then(|f| f.get("name")).and_then(Value::as_str).unwrap_or("").to_owned())
                .collect(),
        ),
        _ => None,
    };
    if tool_calls.is_none() {
        if let Some(call) = message.get("function_call").filter(|c| c.is_object()) {
            tool_calls = Some(vec![call.get("name").and_then(Value::as_str).unwrap_or("").to_owned()]);
        } else if matches!(finish_reason.as_deref(), Some("tool_calls" | "function_call")) {
            tool_calls = Some(Vec::new());
        }
    }
    let reasoning = ["reasoning_content", "reasoning"]
        .iter()
        .filter_map(|k| message.get(*k).and_then(Value::as_str))
        .find(|r| !r.trim().is_empty())
        .map(str::to_owned);
    Ok(Completion { content, refusal, tool_calls, reasoning, finish_reason, usage, secret: None })
}

/// The one choice of a completion or a chunk (`None` when there is none),
/// or why there is not one: vouch asks for one (`n` = 1), so a second
/// choice, or one numbered other than 0, is a second reply, and the text
/// would be read two ways (the SDKs read `choices[0]` of a completion but
/// gather a stream's deltas by their `index`). An `index` left out or null
/// is 0, as some servers write it.
pub(crate) fn the_choice(choices: &[Value]) -> Result<Option<&Value>, String> {
    match choices {
        [] => Ok(None),
        [one] => match one.get("index") {
            None | Some(Value::Null) => Ok(Some(one)),
            Some(i) if i.as_u64() == Some(0) => Ok(Some(one)),
            Some(i) => Err(format!(
                "holds one choice numbered {}, where one choice, numbered 0, was asked (n = 1)",
                excerpt(&i.to_string(), 40)
            )),
        },
        more => Err(format!("holds {} choices where one was asked (n = 1): a reply read two ways", more.len())),
    }
}

/// Where in `value` a decoded string or key holds a secret: the JSON
/// Pointer of the string, or "a property name in …" (the name itself is
/// never part of the answer). The first in document order; depth-first on a
/// stack of its own (no recursion), and the pointer is written only for
/// the place found: with no secret this costs one search per string.
pub(crate) fn secret_place(value: &Value, scrub: &Scrubber) -> Option<String> {
    enum Step<'a> {
        Index(usize),
        Key(&'a str),
    }
    let pointer = |steps: &[Step<'_>]| {
        let mut p = String::new();
        for s in steps {
            match s {
                Step::Index(i) => p.push_str(&format!("/{i}")),
                Step::Key(k) => {
                    p.push('/');
                    p.push_str(&k.replace('~', "~0").replace('/', "~1"));
                }
            }
        }
        if p.is_empty() {
            "(root)".to_owned()
        } else {
            excerpt(&scrub.scrub(&p), 120)
        }
    };
    if !scrub.has_secrets() {
        return None;
    }
    // (depth of the value, the step that reached it, the value)
    let mut stack: Vec<(usize, Option<Step<'_>>, &Value)> = vec![(0, None, value)];
    let mut path: Vec<Step<'_>> = Vec::new();
    while let Some((depth, step, v)) = stack.pop() {
        path.truncate(depth.saturating_sub(1));
        if let Some(step) = step {
            if let Step::Key(k) = step {
                if scrub.holds_secret(k.as_bytes()) {
                    return Some(format!("a property name in {}", pointer(&path)));
                }
            }
            path.push(step);
        }
        match v {
            Value::String(s) if scrub.holds_secret(s.as_bytes()) => return Some(pointer(&path)),
            Value::Array(items) => {
                stack.extend(items.iter().enumerate().rev().map(|(i, item)| (depth + 1, Some(Step::Index(i)), item)));
            }
            Value::Object(members) => {
                stack.extend(members.iter().rev().map(|(k, item)| (depth + 1, Some(Step::Key(k.as_str())), item)));
            }
            _ => {}
        }
    }
    None
}

/// The refusal of a reply that holds the API key (`place` says where).
pub(crate) fn secret_refused(place: &str) -> Judged {
    // The reply is not put back in the conversation: the upstream has
    // the key already, but a reply that echoes it is kept nowhere (not
    // in the conversation, a round's `reply` or a problem), so nothing
    // vouch holds can print it; and re-sending it would invite the
    // model to echo it again. The next round asks afresh, told why.
    let sentence = format!(
        "the reply holds the API key (in {place}), so it is refused and not shown; \
         an upstream that echoes the Authorization header is misconfigured or hostile"
    );
    refused(UpstreamProblem::new(UpstreamCode::SecretInReply, "a reply without the API key", REDACTED, &sentence), None)
}

/// What a round's completion comes to.
pub(crate) enum Judged {
    Accepted(Accepted),
    Refused {
        problems: Vec<AskProblem>,
        /// The model's reply, to put back in the conversation before asking again.
        reply: Option<String>,
    },
}

fn refused(problem: UpstreamProblem, reply: Option<String>) -> Judged {
    Judged::Refused { problems: vec![problem.into()], reply }
}

/// Judge a completion: every way of not answering is refused before the
/// contract sees the content, and then the contract judges it.
pub(crate) fn judge(c: Completion, contract: &Contract, scrub: &Scrubber) -> Judged {
    match screen(c, scrub) {
        Err(judged) => judged,
        Ok(content) => by_contract(contract.check(content.as_bytes()), content),
    }
}

/// The contract's verdict on `content`, as a round's judgement.
pub(crate) fn by_contract(verdict: Verdict, content: String) -> Judged {
    match verdict {
        Verdict::Accepted(a) => Judged::Accepted(a),
        Verdict::Refused(r) => Judged::Refused {
            problems: r.problems.into_iter().map(AskProblem::Contract).collect(),
            reply: Some(content),
        },
    }
}

/// Every way of not answering, before the contract sees the content: the
/// refusal (`Err`), or the content for the contract to judge (`Ok`).
pub(crate) fn screen(c: Completion, scrub: &Scrubber) -> Result<String, Judged> {
    let shown = |t: &str, n: usize| excerpt(&scrub.scrub(t), n);
    if let Some(place) = &c.secret {
        return Err(secret_refused(place));
    }
    let content = c.content.filter(|t| !t.trim().is_empty());
    let finish = c.finish_reason.as_deref();
    if let Some(refusal) = &c.refusal {
        let got = shown(refusal, EXCERPT);
        let sentence = format!("the model refused to answer: {got}");
        return Err(refused(UpstreamProblem::new(UpstreamCode::ModelRefused, "an answer", got, &sentence), None));
    }
    if finish == Some("content_filter") {
        return Err(refused(
            UpstreamProblem::new(
                UpstreamCode::ContentFiltered,
                "a reply",
                "finish_reason \"content_filter\"",
                "the provider's content filter withheld the reply (finish_reason \"content_filter\")",
            ),
            None,
        ));
    }
    if let Some(names) = &c.tool_calls {
        let named: Vec<&str> = names.iter().map(String::as_str).filter(|n| !n.is_empty()).collect();
        let got = if named.is_empty() {
            "tool_calls".to_owned()
        } else {
            format!("tool_calls: {}", shown(&named.join(", "), REPLY_EXCERPT))
        };
        return Err(refused(
            UpstreamProblem::new(
                UpstreamCode::ToolCallsInstead,
                "a reply in the message content",
                got,
                "the model called a tool instead of replying with content",
            ),
            None,
        ));
    }
    let reasoning_tokens = c.usage.as_ref().and_then(|u| u.reasoning_tokens).unwrap_or(0);
    let Some(content) = content else {
        if c.reasoning.is_some() || reasoning_tokens > 0 {
            let got = match &c.reasoning {
                Some(r) => format!("no content; reasoning: {}", shown(r, REPLY_EXCERPT)),
                None => format!("no content; {reasoning_tokens} reasoning tokens"),
            };
            let sentence = format!(
                "the model spent its budget before answering: no content, only reasoning (finish_reason {})",
                finish.map_or_else(|| "null".to_owned(), |f| format!("{f:?}"))
            );
            return Err(refused(
                UpstreamProblem::new(UpstreamCode::ReasoningExhausted, "a reply after the reasoning", got, &sentence),
                None,
            ));
        }
        if finish == Some("length") {
            return Err(refused(
                UpstreamProblem::new(
                    UpstreamCode::CutOff,
                    "a complete reply",
                    "nothing",
                    "the reply was cut off at the token limit before any content (finish_reason \"length\")",
                ),
                None,
            ));
        }
        return Err(refused(
            UpstreamProblem::new(
                UpstreamCode::EmptyContent,
                "a reply",
                "nothing",
                "the model's reply is empty (content null or blank)",
            ),
            None,
        ));
    };
    if finish == Some("length") {
        return Err(refused(
            UpstreamProblem::new(
                UpstreamCode::CutOff,
                "a complete reply",
                shown(&content, REPLY_EXCERPT),
                "the reply was cut off at the token limit (finish_reason \"length\"); it is refused even if it looks complete",
            ),
            Some(content),
        ));
    }
    Ok(content)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::secret_place;
    use crate::scrub::Scrubber;

    const KEY: &str = "sk-test-0123456789abcdef";

    #[test]
    fn the_first_place_of_the_key_is_named_by_its_pointer() {
        let scrub = Scrubber::new([KEY]);
        let doc = json!({"a": [1, {"b/c": "x"}], "d": {"e": ["y", format!("key {KEY}")]}, "f": KEY});
        assert_eq!(secret_place(&doc, &scrub).as_deref(), Some("/d/e/1"));
        assert_eq!(secret_place(&json!(KEY), &scrub).as_deref(), Some("(root)"));
        let in_name = json!({"a": {"b~": {"x": 1, (KEY): 2}}});
        assert_eq!(secret_place(&in_name, &scrub).as_deref(), Some("a property name in /a/b~0"));
        assert_eq!(secret_place(&json!({"a": ["no", {"b": "key"}]}), &scrub), None);
        // A scrubber without a key finds nothing anywhere.
        assert_eq!(secret_place(&doc, &Scrubber::none()), None);
    }

    #[test]
    fn a_deep_document_is_walked_without_recursion() {
        let scrub = Scrubber::new([KEY]);
        let mut doc = json!(KEY);
        for _ in 0..100_000 {
            doc = serde_json::Value::Array(vec![doc]);
        }
        let place = secret_place(&doc, &scrub).unwrap_or_default();
        assert_eq!(place.chars().count(), 121, "{place:.40}"); // shown as an excerpt
        assert!(place.starts_with("/0/0/0"));
        // serde_json's own drop recurses: leak the tree rather than overflow the test's stack.
        std::mem::forget(doc);
    }
}
