//! The reader's words where it reads JSON that is not a reply.

#![allow(clippy::unwrap_used)]

use super::read_json;

/// `read_json` reads request bodies, batch lines, completions and
/// configuration: a problem there is the text's, never "the reply"'s (a
/// batch line cut off is not a reply cut off), with the reply's codes and paths.
#[test]
fn read_json_names_what_it_read_as_text() {
    let deep = format!("{}{}", "[".repeat(40), "]".repeat(40));
    for (text, code, said) in [
        ("[1,", "truncated", "(root): the text was cut off (the text ends in the middle of a value)"),
        ("{\"a\": \"b", "truncated", "the text ends in the middle of a value"),
        (deep.as_str(), "too_deep", "(root): the text nests deeper than 16 levels"),
        ("{\"a\": 1, \"a\": 2}", "duplicate_key", "/a: the key \"a\" appears twice in one object"),
        ("[1] x", "trailing_text", "at line 1, column 5"),
        // A key is quoted as it is, whatever it says.
        ("{\"the reply\": 1, \"the reply\": 2}", "duplicate_key", "the key \"the reply\" appears twice"),
    ] {
        let e = read_json(text, 16).unwrap_err();
        assert_eq!(e.code.as_str(), code, "{text}");
        assert!(e.message.contains(said), "{text}: {}", e.message);
        assert!(!e.message.contains("reply") || code == "duplicate_key", "{text}: {}", e.message);
    }
}
