//! Real-world contracts: the JSON Schemas that Pydantic, the OpenAI SDKs,
//! Instructor, Zod 3 (with zod-to-json-schema) and Zod 4 emit for the models
//! people write, each held to issue #13's promises:
//!
//! (a) the schema compiles, or the model is listed in docs/sources.md with its
//!     reason (the list is parsed from the doc, so the two cannot drift);
//! (b) every valid reply (one the tool's own validator accepts) is accepted,
//!     and vouch never accepts, without a declared repair, a mutated reply the
//!     tool refuses (vouch may be stricter than a coercing tool, never looser);
//! (c) the OpenAI export succeeds, or its error names the keyword and location;
//! (d) soundness: every reply the exported OpenAI schema accepts (judged by the
//!     `jsonschema` crate) the contract accepts;
//! (x) `x-vouch` declared in each tool's own syntax reaches the contract and
//!     acts (the repairs and the finding of the Policy and Plate models).
//!
//! The cases come from `sources/generate`, which this test runs (installs are
//! cached under target/sources/, so a second run costs nothing). Without the
//! registries it says so loudly; under `CI=true` it fails. Every failure is
//! collected and reported at once, and written to target/sources/report.md.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use serde_json::Value;
use vouch::{Contract, Provider, Verdict};

/// The sources in the order the figures are printed.
const SOURCES: &[&str] = &[
    "pydantic",
    "openai_py",
    "instructor",
    "zod3",
    "zod3_named",
    "zod3_openai",
    "openai_node_zod3",
    "zod4",
    "openai_node_zod4",
];

/// Each source must emit schemas for at least this many models (issue #13).
const MIN_MODELS: usize = 25;

/// The sources whose validator is Pydantic (which also has a strict mode).
fn case_is_python(source: &str) -> bool {
    matches!(source, "pydantic" | "openai_py" | "instructor")
}

fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true")
}

fn sources_dir() -> PathBuf {
    std::env::var_os("VOUCH_SOURCES_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| common::project_root().join("target/sources"))
}

/// Run the generator (cached) and return the cases folder; `None` (after a
/// loud message) when it cannot run outside CI. Once per test binary: the
/// tests run in parallel and share one install.
fn cases_dir() -> Option<PathBuf> {
    static GENERATED: OnceLock<Option<PathBuf>> = OnceLock::new();
    GENERATED.get_or_init(generate).clone()
}

fn generate() -> Option<PathBuf> {
    let script = common::project_root().join("sources/generate");
    let status = Command::new("bash").arg(&script).env("VOUCH_SOURCES_DIR", sources_dir()).status();
    let msg = match status {
        Ok(s) if s.success() => return Some(sources_dir().join("cases")),
        Ok(s) if s.code() == Some(3) => format!(
            "SOURCES MISSING: {} could not install the tools (PyPI and the npm registry must be reachable; \
             needs python3 with venv, node and npm)",
            script.display()
        ),
        Ok(s) => format!("SOURCES MISSING: {} failed ({s}); run it by hand to see why", script.display()),
        Err(e) => format!("SOURCES MISSING: cannot run {} ({e}); it needs bash", script.display()),
    };
    if in_ci() {
        panic!("{msg}");
    }
    // Past the harness capture, so a plain `cargo test` shows it.
    common::figure(&format!("\n!!!!! {msg}: SKIPPING the real-world contracts !!!!!\n"));
    None
}

/// One generated case: a model's schema from one source, with replies.
struct Case {
    source: String,
    model: String,
    schema: Option<Value>,
    tool_error: Option<String>,
    valid: Vec<String>,
    /// (operation, path, reply, the tool's verdict).
    mutations: Vec<(String, String, String, bool)>,
    /// Pydantic's verdict in strict mode, per mutation (Python sources only).
    strict: Vec<Option<bool>>,
}

fn load(path: &Path) -> Case {
    let v: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let text = |v: &Value| v.as_str().unwrap().to_owned();
    Case {
        source: text(&v["source"]),
        model: text(&v["model"]),
        schema: Some(v["schema"].clone()).filter(|s| !s.is_null()),
        tool_error: v.get("tool_error").map(text),
        valid: v["valid"].as_array().unwrap().iter().map(|r| text(&r["reply"])).collect(),
        mutations: v["mutations"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| (text(&m["op"]), text(&m["path"]), text(&m["reply"]), m["tool"].as_bool().unwrap()))
            .collect(),
        strict: v["mutations"].as_array().unwrap().iter().map(|m| m["tool_strict"].as_bool()).collect(),
    }
}

/// The models docs/sources.md lists as not compiling: `source/model` → reason,
/// read from the table between the `not-compiling` markers.
fn listed() -> BTreeMap<String, String> {
    table("not-compiling")
}

/// The models docs/sources.md lists as read more strictly than their tool
/// (the tool's own schema says otherwise of its valid replies).
fn stricter_by_design() -> BTreeMap<String, String> {
    table("stricter")
}

/// A `source | model | reason` table between `<!-- NAME:begin -->` and `<!-- NAME:end -->`.
fn table(name: &str) -> BTreeMap<String, String> {
    let doc = std::fs::read_to_string(common::project_root().join("docs/sources.md")).unwrap();
    let start =
        doc.find(&format!("<!-- {name}:begin -->")).unwrap_or_else(|| panic!("docs/sources.md has the {name} list"));
    let end = doc.find(&format!("<!-- {name}:end -->")).unwrap_or_else(|| panic!("the {name} list ends"));
    let mut out = BTreeMap::new();
    for line in doc[start..end].lines() {
        let cells: Vec<&str> = line.trim().trim_matches('|').split('|').map(str::trim).collect();
        if cells.len() != 3 || cells[0] == "source" || cells[0].starts_with('-') {
            continue;
        }
        let (source, model, reason) = (cells[0].trim_matches('`'), cells[1].trim_matches('`'), cells[2]);
        assert!(!reason.is_empty(), "docs/sources.md: {source}/{model} is listed without a reason");
        out.insert(format!("{source}/{model}"), reason.to_owned());
    }
    out
}

/// At most this many extra replies per case.
const MAX_EXTRA: usize = 400;

/// Extra replies for soundness, what an OpenAI export of optional members as
/// nullable lets a model send: each valid reply with every member of one
/// object set to null at once, and with one missing member added as null
/// (any property name the exported schema declares, at any object).
fn extra_replies(valid: &[String], exported: &Value) -> Vec<String> {
    let mut names = BTreeSet::new();
    let mut schemas = vec![exported];
    while let Some(node) = schemas.pop() {
        match node {
            Value::Object(m) => {
                if let Some(Value::Object(props)) = m.get("properties") {
                    names.extend(props.keys().cloned());
                }
                schemas.extend(m.values());
            }
            Value::Array(items) => schemas.extend(items),
            _ => {}
        }
    }
    let mut out = Vec::new();
    for text in valid {
        let v: Value = serde_json::from_str(text).unwrap();
        let mut stack = vec![String::new()];
        while let Some(pointer) = stack.pop() {
            if let Some(Value::Object(m)) = v.pointer(&pointer) {
                for name in names.iter().filter(|n| !m.contains_key(*n)) {
                    let mut filled = v.clone();
                    if let Some(Value::Object(o)) = filled.pointer_mut(&pointer) {
                        o.insert(name.clone(), Value::Null);
                    }
                    out.push(filled.to_string());
                }
            }
            if let Some(Value::Object(m)) = v.pointer(&pointer) {
                stack.extend(m.keys().map(|k| format!("{pointer}/{}", k.replace('~', "~0").replace('/', "~1"))));
            } else if let Some(Value::Array(items)) = v.pointer(&pointer) {
                stack.extend((0..items.len()).map(|i| format!("{pointer}/{i}")));
            }
        }
    }
    for text in valid {
        let v: Value = serde_json::from_str(text).unwrap();
        let mut stack = vec![String::new()];
        while let Some(pointer) = stack.pop() {
            let node = v.pointer(&pointer).unwrap();
            if let Value::Object(m) = node {
                let mut nulled = v.clone();
                for value in nulled.pointer_mut(&pointer).unwrap().as_object_mut().unwrap().values_mut() {
                    *value = Value::Null;
                }
                out.push(nulled.to_string());
                stack.extend(m.keys().map(|k| format!("{pointer}/{}", k.replace('~', "~0").replace('/', "~1"))));
            } else if let Value::Array(items) = node {
                stack.extend((0..items.len()).map(|i| format!("{pointer}/{i}")));
            }
        }
    }
    out.truncate(MAX_EXTRA);
    out
}

fn verdict_line(v: &Verdict) -> String {
    match v {
        Verdict::Accepted(a) if a.repairs.is_empty() => "accepted".to_owned(),
        Verdict::Accepted(a) => format!(
            "accepted with repairs ({})",
            a.repairs.iter().map(|r| format!("{} {}", r.rule, r.path)).collect::<Vec<_>>().join(", ")
        ),
        Verdict::Refused(r) => {
            let first = r.problems.first().map(|p| p.message.clone()).unwrap_or_default();
            format!("refused: {first}")
        }
    }
}

/// The figures of one source.
#[derive(Default)]
struct Figures {
    models: usize,
    tool_refused: usize,
    compiled: usize,
    listed: usize,
    exported: usize,
    refused_export: usize,
    anthropic: usize,
    gemini: usize,
    valid: usize,
    valid_accepted: usize,
    mutations: usize,
    disagreements: usize,
    stricter: usize,
    /// Of `stricter`, those Pydantic's strict mode refuses too.
    strict_agrees: usize,
    schema_refuses: usize,
    schema_looser: usize,
    sound_checked: usize,
    /// Models whose x-vouch, declared through the tool, acted.
    policy_acted: usize,
}

#[derive(Default)]
struct Report {
    /// (source, model, property, detail): a broken promise.
    failures: Vec<(String, String, char, String)>,
    /// (source, model, detail): vouch refuses what the tool accepts (allowed).
    stricter: Vec<(String, String, String)>,
    /// (source, model, detail): the tool's schema and its validator disagree.
    schema_differs: Vec<(String, String, String)>,
    /// (source, model, error): a named OpenAI export refusal (allowed).
    export_refused: Vec<(String, String, String)>,
    /// (source, model, error): the tool emits no schema for the model.
    tool_refused: Vec<(String, String, String)>,
}

impl Report {
    fn fail(&mut self, case: &Case, property: char, detail: String) {
        self.failures.push((case.source.clone(), case.model.clone(), property, detail));
    }
}

/// openai-node with Zod 3 keeps a JSON `.describe()` as a description, so no
/// x-vouch reaches its schemas (docs/sources.md says so; this keeps it true).
const NO_POLICY: &[&str] = &["openai_node_zod3"];

fn policy_acts(case: &Case, contract: &Contract, fig: &mut Figures, report: &mut Report) {
    let (reply, expect_repairs, expect_findings) = match case.model.as_str() {
        "Policy" => (r#"{"verdict": "eligible", "score": "80", "summary": "  ok  "}"#, &["coerce", "trim"][..], 0),
        "Plate" => (r#"{"productPresent": true, "productTextPresent": false, "garbledText": false}"#, &[][..], 1),
        _ => return,
    };
    let carried = contract.document().to_string().contains("\"x-vouch\"");
    if NO_POLICY.contains(&case.source.as_str()) {
        if carried {
            report.fail(case, 'x', "x-vouch reaches this source's schema: docs/sources.md says it cannot".into());
        }
        return;
    }
    match contract.check(reply) {
        Verdict::Accepted(a)
            if a.findings.len() == expect_findings
                && expect_repairs.iter().all(|r| a.repairs.iter().any(|done| done.rule == *r)) =>
        {
            fig.policy_acted += 1;
        }
        v => report.fail(
            case,
            'x',
            format!(
                "the x-vouch declared through the tool did not act on {reply}: {} (carried: {carried})",
                verdict_line(&v)
            ),
        ),
    }
}

fn hold(
    case: &Case,
    listed: &BTreeMap<String, String>,
    stricter: &BTreeMap<String, String>,
    fig: &mut Figures,
    report: &mut Report,
) {
    fig.models += 1;
    let key = format!("{}/{}", case.source, case.model);
    let Some(schema) = &case.schema else {
        // The tool itself refuses to emit a schema for this model (openai-node's
        // optional-without-nullable, Zod 4's bigint): nothing for vouch to hold.
        let error = case.tool_error.clone().unwrap_or_else(|| panic!("{key}: no schema and no tool error"));
        fig.tool_refused += 1;
        report.tool_refused.push((case.source.clone(), case.model.clone(), error));
        return;
    };
    // (a) compiles, or is listed with its reason.
    let contract = match (Contract::from_value(schema.clone()), listed.get(&key)) {
        (Ok(c), None) => {
            fig.compiled += 1;
            c
        }
        (Ok(_), Some(_)) => {
            report.fail(
                case,
                'a',
                "compiles, but docs/sources.md lists it as not compiling: remove it from the list".into(),
            );
            return;
        }
        (Err(_), Some(_)) => {
            fig.listed += 1;
            return;
        }
        (Err(e), None) => {
            let all: Vec<String> =
                e.every().map(|e| format!("`{}` at `{}`: {}", e.keyword, e.location, e.message)).collect();
            report.fail(case, 'a', format!("does not compile: {}", all.join("; ")));
            return;
        }
    };
    // The tool's schema read as plain JSON Schema, x-vouch removed: without
    // formats, to tell a schema that refuses its own tool's reply (OpenAI's
    // strict translation makes optional members required) from vouch
    // refusing it; with formats, to tell a schema looser than its tool's
    // validator (a Decimal as any string) from vouch accepting too much.
    let mut plain = schema.clone();
    common::strip_policy(&mut plain);
    let structure = jsonschema::options().should_validate_formats(false).build(&plain).ok();
    let with_formats = jsonschema::options().should_validate_formats(true).build(&plain).ok();
    let judged = |oracle: &Option<jsonschema::Validator>, reply: &str| {
        let value: Value = serde_json::from_str(reply).unwrap();
        oracle.as_ref().is_none_or(|o| o.is_valid(&value))
    };
    // x-vouch declared through the tool (json_schema_extra, .meta(), a JSON
    // .describe()) reaches the contract and acts: the repairs on Policy run,
    // the finding on Plate fires.
    policy_acts(case, &contract, fig, report);
    // (b) every valid reply accepted — but where docs/sources.md lists the
    // model as read by its schema's own words more strictly than its tool
    // reads it, and then at least one such reply is refused (else the entry is stale).
    let by_design = stricter.get(&key);
    let mut refused_by_design = 0;
    for reply in &case.valid {
        fig.valid += 1;
        match contract.check(reply) {
            Verdict::Accepted(_) => fig.valid_accepted += 1,
            v if by_design.is_some() => {
                refused_by_design += 1;
                report.stricter.push((
                    case.source.clone(),
                    case.model.clone(),
                    format!(
                        "valid reply {reply} refused by design ({}): {}",
                        by_design.map_or("", |r| r),
                        verdict_line(&v)
                    ),
                ));
            }
            v if !judged(&structure, reply) => {
                fig.schema_refuses += 1;
                report.schema_differs.push((
                    case.source.clone(),
                    case.model.clone(),
                    format!("the tool's schema itself refuses its valid reply {reply} (vouch {})", verdict_line(&v)),
                ));
            }
            v => report.fail(case, 'b', format!("valid reply {reply} {}", verdict_line(&v))),
        }
    }
    if by_design.is_some() && refused_by_design == 0 {
        report.fail(
            case,
            'b',
            "every valid reply is accepted, but docs/sources.md lists it as stricter: remove it".into(),
        );
    }
    // (b) the mutations: never looser than the tool, unless a declared repair explains it.
    for ((op, path, reply, tool), strict) in case.mutations.iter().zip(&case.strict) {
        fig.mutations += 1;
        let verdict = contract.check(reply);
        match (&verdict, tool) {
            (Verdict::Accepted(a), false) => {
                fig.disagreements += 1;
                if !a.repairs.is_empty() {
                    // Explained by the contract's declared repairs.
                } else if judged(&with_formats, reply) {
                    fig.schema_looser += 1;
                    report.schema_differs.push((
                        case.source.clone(),
                        case.model.clone(),
                        format!("{op} at {path:?}: {reply} is refused by the tool, but its own schema accepts it (so does vouch)"),
                    ));
                } else {
                    report.fail(
                        case,
                        'b',
                        format!("{op} at {path:?}: {reply} is refused by the tool, accepted by vouch"),
                    );
                }
            }
            (Verdict::Refused(_), true) => {
                fig.disagreements += 1;
                fig.stricter += 1;
                fig.strict_agrees += usize::from(*strict == Some(false));
                report.stricter.push((
                    case.source.clone(),
                    case.model.clone(),
                    format!("{op} at {path:?}: {reply} {}", verdict_line(&verdict)),
                ));
            }
            _ => {}
        }
    }
    // The other providers, for the figures (docs/sources.md: what exports where).
    fig.anthropic += usize::from(contract.provider_schema(Provider::Anthropic, &case.model).is_ok());
    fig.gemini += usize::from(contract.provider_schema(Provider::Gemini, &case.model).is_ok());
    // (c) the OpenAI export succeeds, or names what it cannot express.
    let exported = match contract.provider_schema(Provider::OpenAi, &case.model) {
        Ok(e) => {
            fig.exported += 1;
            e
        }
        Err(e) => {
            fig.refused_export += 1;
            let named = !e.keyword.is_empty()
                && (e.location.is_empty() || e.location.starts_with('/'))
                && !e.message.is_empty();
            if !named {
                report.fail(case, 'c', format!("export error names no keyword/location: {e:?}"));
            }
            report.export_refused.push((
                case.source.clone(),
                case.model.clone(),
                format!("`{}` at `{}`: {}", e.keyword, e.location, e.message),
            ));
            return;
        }
    };
    // (d) soundness: what the export accepts, the contract accepts.
    let inner = &exported["json_schema"]["schema"];
    // With formats: OpenAI's strict mode holds a reply to the formats it supports.
    let oracle = match jsonschema::options().should_validate_formats(true).build(inner) {
        Ok(o) => o,
        Err(e) => {
            report.fail(case, 'd', format!("the exported schema is not valid JSON Schema: {e}"));
            return;
        }
    };
    let extra = extra_replies(&case.valid, inner);
    let replies = case.valid.iter().chain(case.mutations.iter().map(|m| &m.2)).chain(extra.iter());
    for reply in replies {
        let value: Value = serde_json::from_str(reply).unwrap();
        if oracle.is_valid(&value) {
            fig.sound_checked += 1;
            // The value the oracle judged, written back (a key given twice is one
            // key to a parsed value; vouch refuses the text, rightly).
            if let v @ Verdict::Refused(_) = contract.check(value.to_string()) {
                report.fail(case, 'd', format!("the export accepts {reply}, the contract {}", verdict_line(&v)));
            }
        }
    }
}

#[test]
fn real_world_contracts_hold() {
    let Some(dir) = cases_dir() else { return };
    let listed = listed();
    let stricter = stricter_by_design();
    let mut report = Report::default();
    let mut seen = BTreeSet::new();
    let mut summary = String::new();
    for &source in SOURCES {
        let mut paths: Vec<PathBuf> = std::fs::read_dir(dir.join(source))
            .unwrap_or_else(|e| panic!("{}: {e}: sources/generate wrote no cases for {source}", dir.display()))
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .collect();
        paths.sort();
        let mut fig = Figures::default();
        for path in &paths {
            let case = load(path);
            seen.insert(format!("{}/{}", case.source, case.model));
            hold(&case, &listed, &stricter, &mut fig, &mut report);
        }
        let line = format!(
            "{source}: {} models, compiled {}, listed {}, tool refused {}, exported {}, refused-export {} (named), \
             exported to Anthropic {}, to Gemini {}, \
             replies {}/{} valid accepted ({} refused by the tool's own schema), mutations {}, \
             tool/vouch disagreements {} ({} vouch stricter{}, {} the tool's schema looser than the tool), \
             soundness checked on {} replies, x-vouch acted in {} models",
            fig.models,
            fig.compiled,
            fig.listed,
            fig.tool_refused,
            fig.exported,
            fig.refused_export,
            fig.anthropic,
            fig.gemini,
            fig.valid_accepted,
            fig.valid,
            fig.schema_refuses,
            fig.mutations,
            fig.disagreements,
            fig.stricter,
            if case_is_python(source) {
                format!(" of which Pydantic strict refuses {}", fig.strict_agrees)
            } else {
                String::new()
            },
            fig.schema_looser,
            fig.sound_checked,
            fig.policy_acted
        );
        common::figure(&line);
        let schemas = fig.models - fig.tool_refused;
        assert!(
            schemas >= MIN_MODELS,
            "{source}: schemas from {schemas} models, the issue asks for at least {MIN_MODELS}"
        );
        summary.push_str(&line);
        summary.push('\n');
    }
    for key in listed.keys().chain(stricter.keys()) {
        assert!(seen.contains(key), "docs/sources.md lists {key}, which is no generated case");
    }

    // The inventory, for people: every broken promise, then where vouch is stricter.
    let mut md = format!("# Real-world contracts: report\n\n```\n{summary}```\n\n## Broken promises\n\n");
    for (source, model, property, detail) in &report.failures {
        let _ = writeln!(md, "- {source}/{model} ({property}): {detail}");
    }
    for (title, list) in [
        ("OpenAI export refused, named (allowed)", &report.export_refused),
        ("The tool emits no schema", &report.tool_refused),
        ("The tool's schema and its validator disagree (not vouch's to decide)", &report.schema_differs),
        ("vouch stricter than the tool (allowed)", &report.stricter),
    ] {
        let _ = write!(md, "\n## {title}\n\n");
        for (source, model, detail) in list {
            let _ = writeln!(md, "- {source}/{model}: {detail}");
        }
    }
    let _ = std::fs::write(sources_dir().join("report.md"), md);

    let mut by_property: BTreeMap<char, usize> = BTreeMap::new();
    for f in &report.failures {
        *by_property.entry(f.2).or_default() += 1;
    }
    let mut msg = String::new();
    for (source, model, property, detail) in report.failures.iter().take(200) {
        let _ = writeln!(msg, "  {source}/{model} ({property}): {detail}");
    }
    assert!(
        report.failures.is_empty(),
        "{} broken promises (by property: {by_property:?}; all in {}):\n{msg}",
        report.failures.len(),
        sources_dir().join("report.md").display()
    );
}

/// The Python and JavaScript snippets of docs/sources.md, each with the
/// language and, for JavaScript, the Zod major (` ```js zod4 `).
fn doc_snippets() -> Vec<(String, String)> {
    let doc = std::fs::read_to_string(common::project_root().join("docs/sources.md")).unwrap();
    let mut out = Vec::new();
    let mut lines = doc.lines();
    while let Some(line) = lines.next() {
        let Some(info) = line.strip_prefix("```") else { continue };
        let body: Vec<&str> = lines.by_ref().take_while(|l| !l.starts_with("```")).collect();
        if info == "python" || info.starts_with("js") {
            out.push((info.to_owned(), body.join("\n") + "\n"));
        }
    }
    out
}

/// Every Python and JavaScript snippet of docs/sources.md runs with the pinned
/// tools, prints a schema that vouch compiles, and carries its `x-vouch`.
#[test]
fn doc_snippets_run() {
    if cases_dir().is_none() {
        return;
    }
    let dir = sources_dir();
    let snippets = doc_snippets();
    let count = |lang: &str| snippets.iter().filter(|s| s.0.starts_with(lang)).count();
    assert!(count("python") >= 3 && count("js zod3") >= 1 && count("js zod4") >= 2, "docs/sources.md lost snippets");
    for (i, (info, code)) in snippets.iter().enumerate() {
        let output = if info == "python" {
            let file = dir.join(format!("snippet_{i}.py"));
            std::fs::write(&file, code).unwrap();
            Command::new(dir.join("venv/bin/python")).arg(&file).output().unwrap()
        } else {
            let major =
                info.strip_prefix("js ").unwrap_or_else(|| panic!("```{info}: name the Zod major (js zod3, js zod4)"));
            // Inside the prefix, so `require` finds that prefix's packages.
            let file = dir.join(major).join(format!("snippet_{i}.cjs"));
            std::fs::write(&file, code).unwrap();
            Command::new("node").arg(&file).output().unwrap()
        };
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(
            output.status.success(),
            "docs/sources.md snippet {i} ({info}) failed:\n{code}\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let schema: Value = serde_json::from_str(stdout.trim())
            .unwrap_or_else(|e| panic!("snippet {i} ({info}) prints no schema ({e}):\n{stdout}"));
        assert!(
            stdout.contains("\"x-vouch\""),
            "snippet {i} ({info}): its x-vouch did not reach the schema:\n{stdout}"
        );
        if let Err(e) = Contract::from_value(schema) {
            panic!("snippet {i} ({info}): the schema does not compile: {e}\n{stdout}");
        }
    }
    common::figure(&format!("docs/sources.md: {} snippets run, each schema compiled", snippets.len()));
}

/// The harness itself: a broken promise in a case is reported with its
/// property, so a passing run means the promises hold, not that nothing was looked at.
#[test]
fn harness_reports_broken_promises() {
    let case = |model: &str, schema: Value, valid: &[&str]| Case {
        source: "self".into(),
        model: model.into(),
        schema: Some(schema),
        tool_error: None,
        valid: valid.iter().map(|s| (*s).to_owned()).collect(),
        mutations: vec![],
        strict: vec![],
    };
    let object = serde_json::json!({"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]});
    let mut listed = BTreeMap::new();
    listed.insert("self/Listed".to_owned(), "a reason".to_owned());
    let cases = [
        // A key given twice: JSON.parse and Pydantic keep the last, vouch refuses (b).
        case("Duplicate", object.clone(), &[r#"{"a": 1, "a": 1}"#]),
        // Listed as not compiling, but compiles (a).
        case("Listed", object.clone(), &[r#"{"a": 1}"#]),
        // Does not compile and is not listed (a).
        case("Broken", serde_json::json!({"type": "object", "minimum": "zero"}), &[]),
        // Holds every promise.
        case("Fine", object, &[r#"{"a": 1}"#]),
    ];
    let mut report = Report::default();
    let mut fig = Figures::default();
    for c in &cases {
        hold(c, &listed, &BTreeMap::new(), &mut fig, &mut report);
    }
    let got: Vec<(&str, char)> = report.failures.iter().map(|f| (f.1.as_str(), f.2)).collect();
    assert_eq!(got, [("Duplicate", 'b'), ("Listed", 'a'), ("Broken", 'a')], "{:?}", report.failures);
    assert_eq!((fig.models, fig.compiled, fig.valid_accepted, fig.exported), (4, 2, 1, 2));
}
