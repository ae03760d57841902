//! Shared helpers for the integration tests.
#![allow(dead_code)]

use std::path::PathBuf;

use serde_json::{json, Map, Value};

/// The shared folder (`VOUCH_SHARED`, default `../shared` from the project
/// root). When it is missing the test says so loudly; under `CI=true` it fails.
pub fn shared_dir(sub: &str) -> Option<PathBuf> {
    let root = std::env::var_os("VOUCH_SHARED")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared"));
    let dir = root.join(sub);
    if dir.is_dir() {
        return Some(dir);
    }
    let msg = format!("SHARED DATA MISSING: {} not found (set VOUCH_SHARED to the shared folder)", dir.display());
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("{msg}");
    }
    eprintln!("\n!!!!! {msg}: SKIPPING !!!!!\n");
    None
}

/// The project root (for examples/).
pub fn project_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The contract as an independent validator sees it: every `x-vouch` removed.
pub fn strip_policy(v: &mut Value) {
    match v {
        Value::Object(map) => {
            map.remove("x-vouch");
            map.values_mut().for_each(strip_policy);
        }
        Value::Array(items) => items.iter_mut().for_each(strip_policy),
        _ => {}
    }
}

/// Print a suite's figures line so a plain `cargo test` shows it: straight
/// to standard error, past the test harness's capture of `println!`.
pub fn figure(line: &str) {
    use std::io::Write as _;
    let _ = writeln!(std::io::stderr(), "{line}");
}

/// The JSON-Schema-Test-Suite's remote documents, served from memory as its
/// runners serve them over HTTP: `http://localhost:1234/<path>` for each
/// file under `remotes/` (never a socket).
pub fn remotes(dir: &std::path::Path) -> Vec<(String, Value)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else { continue };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "json") {
                let rel = path.strip_prefix(dir).unwrap_or(&path).to_string_lossy().replace('\\', "/");
                if let Ok(v) = serde_json::from_str(&std::fs::read_to_string(&path).unwrap_or_default()) {
                    out.push((format!("http://localhost:1234/{rel}"), v));
                }
            }
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// Gemini's OpenAPI subset read as JSON Schema, as permissively as it can be
/// read (for the export soundness tests: the more it admits, the stronger
/// the test): objects hold only declared properties (Gemini generates no
/// others), and `nullable` admits null wherever it stands.
pub fn gemini_as_json_schema(v: &Value) -> Value {
    match v {
        Value::Object(m) => {
            let mut out = Map::new();
            let nullable = m.get("nullable") == Some(&json!(true));
            for (k, x) in m {
                match k.as_str() {
                    "type" => {
                        let t = json!(x.as_str().unwrap_or_default().to_lowercase());
                        out.insert("type".into(), if nullable { json!([t, "null"]) } else { t });
                    }
                    "nullable" | "propertyOrdering" => {}
                    "format" if x == "enum" => {}
                    "properties" => {
                        let props: Map<String, Value> = x
                            .as_object()
                            .into_iter()
                            .flatten()
                            .map(|(n, s)| (n.clone(), gemini_as_json_schema(s)))
                            .collect();
                        out.insert(k.clone(), Value::Object(props));
                        out.insert("additionalProperties".into(), json!(false));
                    }
                    _ => {
                        out.insert(k.clone(), gemini_as_json_schema(x));
                    }
                }
            }
            if nullable {
                if let Some(Value::Array(e)) = out.get_mut("enum") {
                    e.push(Value::Null);
                }
                if !m.contains_key("type") {
                    return json!({"anyOf": [Value::Object(out), {"type": "null"}]});
                }
            }
            Value::Object(out)
        }
        Value::Array(a) => Value::Array(a.iter().map(gemini_as_json_schema).collect()),
        other => other.clone(),
    }
}

/// The verdict `check` must give on `raw`, from the full path (read, repair,
/// check, report, without the single pass): the full path's own, but for a
/// reply the streaming check refused while reading, whose certain problems
/// the full path does not list (a reply cut off or unreadable after them, one
/// needing too many repairs): those come first, then the full path's.
pub fn expected_verdict(contract: &vouch::Contract, raw: &[u8]) -> vouch::Verdict {
    let full = contract.check_full_path(raw);
    let mut stream = contract.stream();
    stream.feed(raw);
    let listed = |p: &vouch::Problem| full.problems().iter().any(|f| f.code == p.code && f.path == p.path);
    if stream.progress() == vouch::Progress::Pending || (!full.is_accepted() && stream.problems().iter().all(listed)) {
        return full;
    }
    let mut problems: Vec<vouch::Problem> = stream.problems().iter().filter(|p| !listed(p)).cloned().collect();
    let room = contract.limits().max_problems.max(problems.len());
    problems.extend(full.problems().iter().cloned());
    problems.truncate(room);
    vouch::Verdict::Refused(vouch::Refused { problems })
}

/// The benchmark corpus (`$VOUCH_SHARED/bench/gen.py`) generated into
/// `out` with `small` and `large` replies: the shared `bench` folder and
/// the corpus's folder, or `None` (said loudly; under `CI=true` it fails)
/// without the shared folder or `python3`.
pub fn bench_corpus(out: &std::path::Path, small: usize, large: usize) -> Option<(PathBuf, PathBuf)> {
    let bench = shared_dir("bench")?;
    let made = std::process::Command::new("python3")
        .arg(bench.join("gen.py"))
        .args(["--out", out.to_str()?, "--small", &small.to_string(), "--large", &large.to_string()])
        .status();
    match made {
        Ok(s) if s.success() => Some((bench, out.to_path_buf())),
        other => {
            let msg = format!("cannot generate the benchmark corpus with python3: {other:?}");
            assert!(!std::env::var("CI").is_ok_and(|v| v == "true"), "{msg}");
            eprintln!("\n!!!!! {msg}: SKIPPING !!!!!\n");
            None
        }
    }
}

/// Whether `verdict` on `text` is a pass as sent: accepted with no repair
/// and no finding, its vouched text the reply's own (borrowed, not written
/// again) without JSON's white space around it. What `Brief::PassedAsSent`
/// promises, and what the bindings hand over from the caller's own text.
pub fn passed_as_sent(verdict: &vouch::Verdict, text: &str) -> bool {
    let vouch::Verdict::Accepted(a) = verdict else { return false };
    let trimmed = text.trim_matches(|c| matches!(c, ' ' | '\t' | '\n' | '\r'));
    a.repairs.is_empty()
        && a.findings.is_empty()
        && matches!(a.json(), std::borrow::Cow::Borrowed(json) if json == trimmed)
}

/// `serde_json` values from [`vouch::Build`]'s constructors, keys in the
/// order they came (to hold `build_as_sent` to the serde walk).
pub struct Tree;

impl vouch::Build for Tree {
    type Value = Value;
    type List = Vec<Value>;
    type Map = serde_json::Map<String, Value>;
    type Error = String;

    fn null(&mut self) -> Result<Value, String> {
        Ok(Value::Null)
    }
    fn bool(&mut self, v: bool) -> Result<Value, String> {
        Ok(Value::Bool(v))
    }
    fn i64(&mut self, v: i64) -> Result<Value, String> {
        Ok(v.into())
    }
    fn u64(&mut self, v: u64) -> Result<Value, String> {
        Ok(v.into())
    }
    fn f64(&mut self, v: f64) -> Result<Value, String> {
        serde_json::Number::from_f64(v).map(Value::Number).ok_or_else(|| format!("{v} is not JSON"))
    }
    fn str(&mut self, v: &str) -> Result<Value, String> {
        Ok(Value::String(v.to_owned()))
    }
    fn list(&mut self, _: Option<usize>) -> Result<Vec<Value>, String> {
        Ok(Vec::new())
    }
    fn push(&mut self, list: &mut Vec<Value>, item: Value) -> Result<(), String> {
        list.push(item);
        Ok(())
    }
    fn end_list(&mut self, list: Vec<Value>) -> Result<Value, String> {
        Ok(Value::Array(list))
    }
    fn map(&mut self, _: Option<usize>) -> Result<Self::Map, String> {
        Ok(serde_json::Map::new())
    }
    fn insert(&mut self, map: &mut Self::Map, key: Value, value: Value) -> Result<(), String> {
        let Value::String(key) = key else { return Err("a key that is not a string".into()) };
        map.insert(key, value);
        Ok(())
    }
    fn end_map(&mut self, map: Self::Map) -> Result<Value, String> {
        Ok(Value::Object(map))
    }
}
