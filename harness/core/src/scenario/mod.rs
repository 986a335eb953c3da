//! Scenario files: the format (`format`, documented in `docs/scenario-format.md`), its JSON
//! Schema, strict loading with every problem reported at once (`file:line:column`), variants
//! (merge patches over the base document), and the typed model the engine runs (`model`).
//!
//! Pipeline: YAML → located tree (`tree`) → variant patch (`patch`) → `apiVersion`/`kind` →
//! schema check (`schema`) → per-section decoding and semantic checks (`decode`) → [`Scenario`].

mod decode;
mod diagnostic;
pub mod format;
pub mod model;
mod patch;
mod path;
mod schema;
mod set;
mod suggest;
mod tree;
pub mod units;
mod window;

use std::path::Path;

pub use diagnostic::{Diagnostic, ScenarioErrors};
pub use model::*;
pub use schema::json_schema;
pub use set::{Override, paths_named};

use diagnostic::Problem;
use path::FieldPath;

/// The name `--variant` takes for the base document (the file without any variant applied).
pub const BASE_VARIANT: &str = "base";

/// Reads, checks and builds the scenario in `path`, with `variant` applied if given (`base`
/// is the base document). The base document must be valid too. Problems are reported against
/// `path` as given.
pub fn load_scenario(path: &Path, variant: Option<&str>) -> Result<Scenario, ScenarioErrors> {
    load_scenario_with(path, variant, &[])
}

/// As [`load_scenario`], with values overridden as `harness run --set PATH=VALUE` does: each
/// override replaces one value after the variant's patch and before any check (see
/// [`Override`]); a problem with an overridden value says so.
pub fn load_scenario_with(
    path: &Path,
    variant: Option<&str>,
    overrides: &[Override],
) -> Result<Scenario, ScenarioErrors> {
    let file = path.display().to_string();
    let text = read(path, &file)?;
    load_scenario_str_with(&text, &file, variant, overrides)
}

/// As [`load_scenario`], for text already read; `file` names it in diagnostics.
pub fn load_scenario_str(
    text: &str,
    file: &str,
    variant: Option<&str>,
) -> Result<Scenario, ScenarioErrors> {
    load_scenario_str_with(text, file, variant, &[])
}

/// As [`load_scenario_with`], for text already read; `file` names it in diagnostics. A
/// problem that only the overrides cause — on a value they did not set, e.g. timeline entries
/// beyond a shortened `load.duration` — names the `--set` that caused it.
pub fn load_scenario_str_with(
    text: &str,
    file: &str,
    variant: Option<&str>,
    overrides: &[Override],
) -> Result<Scenario, ScenarioErrors> {
    let result = load_once(text, file, variant, overrides);
    match result {
        Err(errors) if !overrides.is_empty() => Err(attribute_to_overrides(
            errors, text, file, variant, overrides,
        )),
        other => other,
    }
}

/// Appends to each problem the overrides cause elsewhere than in the value they set (those
/// say "the value comes from" already) which `--set` causes it: the one that alone causes it,
/// else all of them.
fn attribute_to_overrides(
    mut errors: ScenarioErrors,
    text: &str,
    file: &str,
    variant: Option<&str>,
    overrides: &[Override],
) -> ScenarioErrors {
    type Key = (Option<String>, String, String);
    let keys = |r: Result<Scenario, ScenarioErrors>| -> Vec<Key> {
        r.err()
            .map(|e| {
                e.diagnostics
                    .into_iter()
                    .map(|d| (d.variant, d.path, d.message))
                    .collect()
            })
            .unwrap_or_default()
    };
    let without = keys(load_once(text, file, variant, &[]));
    let alone: Vec<Vec<Key>> = if overrides.len() == 1 {
        vec![Vec::new()]
    } else {
        overrides
            .iter()
            .map(|o| keys(load_once(text, file, variant, std::slice::from_ref(o))))
            .collect()
    };
    for d in &mut errors.diagnostics {
        if d.message.contains("(the value comes from --set") {
            continue;
        }
        let key = (d.variant.clone(), d.path.clone(), d.message.clone());
        if without.contains(&key) {
            continue;
        }
        let causes: Vec<String> = if overrides.len() == 1 {
            vec![overrides[0].to_string()]
        } else {
            let single: Vec<String> = overrides
                .iter()
                .zip(&alone)
                .filter(|(_, problems)| problems.contains(&key))
                .map(|(o, _)| o.to_string())
                .collect();
            if single.is_empty() {
                overrides.iter().map(ToString::to_string).collect()
            } else {
                // Each of these causes it alone: name the first.
                single.into_iter().take(1).collect()
            }
        };
        d.message.push_str(&format!(
            " (caused by {}: the file passes this check without it)",
            causes.join(" together with ")
        ));
    }
    errors
}

fn load_once(
    text: &str,
    file: &str,
    variant: Option<&str>,
    overrides: &[Override],
) -> Result<Scenario, ScenarioErrors> {
    let mut tree = parse(text, file)?;
    let variants = variants_of(&tree);
    let names: Vec<String> = variants.iter().map(|(name, _)| name.clone()).collect();
    // With a variant selected, the overrides are for the variant's run: the base document is
    // checked as the file has it (it must stay valid), and only the variant with the overrides
    // has to be — `--set ingress.sortEndpointsBy=ip` is fine for a variant on v0.16 even though
    // the base is on v0.6.
    let file_base = variant
        .filter(|v| *v != BASE_VARIANT)
        .map(|_| decode::evaluate(&tree, &[], &names, None));
    let set_paths = set::apply(&mut tree, overrides)
        .map_err(|message| ScenarioErrors::whole_file(file, message))?;
    let mark = |e: ScenarioErrors| mark_overridden(e, &set_paths);
    let base = file_base.unwrap_or_else(|| decode::evaluate(&tree, &[], &names, None));
    let Some(selected) = variant.filter(|v| *v != BASE_VARIANT) else {
        return base.map_err(|problems| mark(errors(file, problems, Vec::new())));
    };
    let Some((_, patch)) = variants.iter().find(|(name, _)| name == selected) else {
        let known = if names.is_empty() {
            format!(
                "this file defines no variants (`--variant {BASE_VARIANT}` is the base document)"
            )
        } else {
            format!(
                "variants are: {}, and `{BASE_VARIANT}` for the base document",
                names.join(", ")
            )
        };
        let path = FieldPath::root().key("variants");
        let mut problems = base.err().unwrap_or_default();
        problems.push(Problem {
            loc: tree.locate(&path),
            path: path.to_string(),
            message: format!("unknown variant `{selected}`; {known}"),
        });
        return Err(mark(errors(file, problems, Vec::new())));
    };
    match (
        base,
        evaluate_variant(&tree, &names, selected, patch, overrides),
    ) {
        (Ok(_), Ok(scenario)) => Ok(scenario),
        (base, variant) => Err(mark(errors(
            file,
            base.err().unwrap_or_default(),
            vec![(selected.to_owned(), variant.err().unwrap_or_default())],
        ))),
    }
}

/// Marks the problems about a value an override set: the file's line is the one it replaced.
fn mark_overridden(
    mut errors: ScenarioErrors,
    set_paths: &[(FieldPath, Override)],
) -> ScenarioErrors {
    for d in &mut errors.diagnostics {
        if let Some((_, o)) = set_paths.iter().find(|(p, _)| set::concerns(&d.path, p)) {
            d.message.push_str(&format!(" (the value comes from {o})"));
        }
    }
    errors
}

/// Checks the file in `path`: the base document and every variant. Returns the variant names.
pub fn validate_file(path: &Path) -> Result<Vec<String>, ScenarioErrors> {
    let file = path.display().to_string();
    let text = read(path, &file)?;
    validate_str(&text, &file)
}

/// As [`validate_file`], for text already read; `file` names it in diagnostics.
pub fn validate_str(text: &str, file: &str) -> Result<Vec<String>, ScenarioErrors> {
    let tree = parse(text, file)?;
    let variants = variants_of(&tree);
    let names: Vec<String> = variants.iter().map(|(name, _)| name.clone()).collect();
    let base = decode::evaluate(&tree, &[], &names, None)
        .err()
        .unwrap_or_default();
    let per_variant: Vec<(String, Vec<Problem>)> = variants
        .iter()
        .map(|(name, patch)| {
            let problems = evaluate_variant(&tree, &names, name, patch, &[])
                .err()
                .unwrap_or_default();
            (name.clone(), problems)
        })
        .collect();
    if base.is_empty() && per_variant.iter().all(|(_, p)| p.is_empty()) {
        Ok(names)
    } else {
        Err(errors(file, base, per_variant))
    }
}

fn read(path: &Path, file: &str) -> Result<String, ScenarioErrors> {
    if path.is_dir() {
        return Err(ScenarioErrors::whole_file(file, directory_message(path)));
    }
    let bytes = std::fs::read(path)
        .map_err(|e| ScenarioErrors::whole_file(file, format!("cannot read the file: {e}")))?;
    text_of(bytes).map_err(|message| ScenarioErrors::whole_file(file, message))
}

/// The file's text, or what its encoding is when it is not UTF-8.
fn text_of(bytes: Vec<u8>) -> Result<String, String> {
    if bytes.starts_with(&[0xFF, 0xFE]) || bytes.starts_with(&[0xFE, 0xFF]) {
        return Err(
            "the file is UTF-16 (it starts with a UTF-16 byte-order mark): save it as UTF-8"
                .to_owned(),
        );
    }
    String::from_utf8(bytes).map_err(|e| {
        format!(
            "the file is not UTF-8 (the first bad byte is at offset {}): save it as UTF-8",
            e.utf8_error().valid_up_to()
        )
    })
}

/// A no-break space (U+00A0) in a line's indentation: YAML indents with plain spaces only, and
/// an editor or a copy from a web page may put these in, unseen.
fn indentation_nbsp(text: &str) -> Option<tree::Loc> {
    text.lines().enumerate().find_map(|(i, line)| {
        let indent: String = line
            .chars()
            .take_while(|c| *c == ' ' || *c == '\t' || *c == '\u{a0}')
            .collect();
        indent
            .chars()
            .position(|c| c == '\u{a0}')
            .map(|col| tree::Loc {
                line: i as u32 + 1,
                column: col as u32 + 1,
            })
    })
}

/// "is a directory, not a scenario file; scenario files in it: a.yaml, b.yaml".
fn directory_message(path: &Path) -> String {
    let mut scenarios: Vec<String> = std::fs::read_dir(path)
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            p.is_file()
                && matches!(p.extension().and_then(|e| e.to_str()), Some("yaml" | "yml"))
                && std::fs::read_to_string(p).is_ok_and(|t| t.contains("kind: Scenario"))
        })
        .filter_map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .collect();
    scenarios.sort();
    let found = if scenarios.is_empty() {
        "it holds no scenario files (YAML with `kind: Scenario`)".to_owned()
    } else {
        format!(
            "scenario files in it: {}; name one (or several) of them",
            scenarios.join(", ")
        )
    };
    format!("is a directory, not a scenario file; {found}")
}

fn parse(text: &str, file: &str) -> Result<tree::Node, ScenarioErrors> {
    if text
        .lines()
        .all(|l| l.trim().is_empty() || l.trim_start().starts_with('#'))
    {
        let what = if text.trim().is_empty() {
            "the file is empty"
        } else {
            "the file holds only comments"
        };
        return Err(ScenarioErrors::whole_file(
            file,
            format!(
                "{what}; a scenario starts with `apiVersion: {}` and `kind: {}`",
                format::API_VERSION,
                format::KIND
            ),
        ));
    }
    if let Some(loc) = indentation_nbsp(text) {
        let problem = Problem {
            loc,
            path: String::new(),
            message: "invalid YAML: a no-break space (U+00A0) in the indentation; indent with \
                      plain spaces (U+0020)"
                .to_owned(),
        };
        return Err(errors(file, vec![problem], Vec::new()));
    }
    tree::parse(text).map_err(|e| {
        let problem = match indentation_tab(text, &e) {
            Some(loc) => Problem {
                loc,
                path: String::new(),
                message: "invalid YAML: a tab in the indentation; indent with spaces (YAML \
                          does not allow tabs there)"
                    .to_owned(),
            },
            None => Problem {
                loc: e.loc,
                path: String::new(),
                message: format!("invalid YAML: {}", e.message),
            },
        };
        errors(file, vec![problem], Vec::new())
    })
}

/// Where a tab sits in a line's indentation, when the parser's complaint is about a tab: the
/// parser stops at the line before (it was still scanning that line's value), so look from
/// there on.
fn indentation_tab(text: &str, error: &tree::SyntaxError) -> Option<tree::Loc> {
    if !error.message.contains("tab") {
        return None;
    }
    let from = error.loc.line.saturating_sub(1) as usize;
    let find = |(i, line): (usize, &str)| {
        let indent: String = line
            .chars()
            .take_while(|c| *c == ' ' || *c == '\t')
            .collect();
        indent.find('\t').map(|col| tree::Loc {
            line: i as u32 + 1,
            column: indent[..col].chars().count() as u32 + 1,
        })
    };
    let lines = || text.lines().enumerate();
    lines()
        .skip(from)
        .find_map(find)
        .or_else(|| lines().find_map(find))
}

/// The variants (name and patch) in file order, if `variants` is a mapping. Patches that are
/// not mappings are left out: the schema check of the base document reports them.
fn variants_of(tree: &tree::Node) -> Vec<(String, tree::Node)> {
    let Some(entries) = tree.get("variants").and_then(tree::Node::entries) else {
        return Vec::new();
    };
    entries
        .iter()
        .map(|e| (e.key.clone(), e.value.clone()))
        .collect()
}

/// Applies one variant's patch to the base document (and then the overrides, which win) and
/// checks the result.
fn evaluate_variant(
    tree: &tree::Node,
    names: &[String],
    name: &str,
    patch: &tree::Node,
    overrides: &[Override],
) -> Result<Scenario, Vec<Problem>> {
    let tree::Value::Map(entries) = &patch.value else {
        return Err(Vec::new());
    };
    let mut own = Vec::new();
    let mut kept = Vec::new();
    for entry in entries {
        if entry.key == "variants" {
            own.push(Problem {
                loc: entry.key_loc,
                path: FieldPath::root()
                    .key("variants")
                    .key(name)
                    .key("variants")
                    .to_string(),
                message: "a variant cannot change `variants`".to_owned(),
            });
        } else {
            kept.push(entry.clone());
        }
    }
    let patch = tree::Node {
        loc: patch.loc,
        value: tree::Value::Map(kept),
    };
    let (mut merged, deletions) = patch::merge_patch(tree, &patch);
    // The overrides were applied to the base already; they must win over the patch too.
    if let Err(message) = set::apply(&mut merged, overrides) {
        own.push(Problem {
            loc: tree::Loc::default(),
            path: String::new(),
            message,
        });
    }
    match decode::evaluate(&merged, &deletions, names, Some(name)) {
        Ok(scenario) if own.is_empty() => Ok(scenario),
        result => {
            own.extend(result.err().unwrap_or_default());
            Err(own)
        }
    }
}

/// Diagnostics of the base document, then those only a variant has (labelled with it), all in
/// file order. A variant's problem is the base's when both name the same field and fault.
fn errors(file: &str, base: Vec<Problem>, variants: Vec<(String, Vec<Problem>)>) -> ScenarioErrors {
    let mut diagnostics: Vec<Diagnostic> = Vec::new();
    for (name, problems) in &variants {
        for problem in problems {
            if base
                .iter()
                .any(|b| (&b.path, &b.message) == (&problem.path, &problem.message))
            {
                continue;
            }
            let diagnostic = problem.clone().into_diagnostic(file, Some(name));
            if !diagnostics.contains(&diagnostic) {
                diagnostics.push(diagnostic);
            }
        }
    }
    let mut all: Vec<Diagnostic> = base
        .into_iter()
        .map(|p| p.into_diagnostic(file, None))
        .collect();
    all.extend(diagnostics);
    all.sort_by_key(|d| (d.line, d.column));
    ScenarioErrors { diagnostics: all }
}
