//! Scenario files: the format (`format`, documented in `docs/scenario-format.md`), its JSON
//! Schema, strict loading with every problem reported at once (`file:line:column`), variants
//! (merge patches over the base document), and the typed model the engine runs (`model`).
//!
//! Pipeline: YAML → located tree (`tree`) → variant patch (`patch`) → `apiVersion`/`kind` →
//! schema check (`schema`) → per-section decoding and semantic checks (`build`) → [`Scenario`].

mod build;
mod diagnostic;
pub mod format;
pub mod model;
mod patch;
mod path;
mod schema;
mod suggest;
mod tree;
pub mod units;
mod window;

use std::path::Path;

pub use diagnostic::{Diagnostic, ScenarioErrors};
pub use model::*;
pub use schema::json_schema;

use diagnostic::Problem;
use path::FieldPath;

/// Reads, checks and builds the scenario in `path`, with `variant` applied if given. The base
/// document must be valid too. Problems are reported against `path` as given.
pub fn load_scenario(path: &Path, variant: Option<&str>) -> Result<Scenario, ScenarioErrors> {
    let file = path.display().to_string();
    let text = read(path, &file)?;
    load_scenario_str(&text, &file, variant)
}

/// As [`load_scenario`], for text already read; `file` names it in diagnostics.
pub fn load_scenario_str(
    text: &str,
    file: &str,
    variant: Option<&str>,
) -> Result<Scenario, ScenarioErrors> {
    let tree = parse(text, file)?;
    let variants = variants_of(&tree);
    let names: Vec<String> = variants.iter().map(|(name, _)| name.clone()).collect();
    let base = build::evaluate(&tree, &[], &names, None);
    let Some(selected) = variant else {
        return base.map_err(|problems| errors(file, problems, Vec::new()));
    };
    let Some((_, patch)) = variants.iter().find(|(name, _)| name == selected) else {
        let known = if names.is_empty() {
            "this file defines no variants".to_owned()
        } else {
            format!("variants are: {}", names.join(", "))
        };
        let path = FieldPath::root().key("variants");
        let mut problems = base.err().unwrap_or_default();
        problems.push(Problem {
            loc: tree.locate(&path),
            path: path.to_string(),
            message: format!("unknown variant `{selected}`; {known}"),
        });
        return Err(errors(file, problems, Vec::new()));
    };
    match (base, evaluate_variant(&tree, &names, selected, patch)) {
        (Ok(_), Ok(scenario)) => Ok(scenario),
        (base, variant) => Err(errors(
            file,
            base.err().unwrap_or_default(),
            vec![(selected.to_owned(), variant.err().unwrap_or_default())],
        )),
    }
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
    let base = build::evaluate(&tree, &[], &names, None)
        .err()
        .unwrap_or_default();
    let per_variant: Vec<(String, Vec<Problem>)> = variants
        .iter()
        .map(|(name, patch)| {
            let problems = evaluate_variant(&tree, &names, name, patch)
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
    std::fs::read_to_string(path)
        .map_err(|e| ScenarioErrors::whole_file(file, format!("cannot read the file: {e}")))
}

fn parse(text: &str, file: &str) -> Result<tree::Node, ScenarioErrors> {
    tree::parse(text).map_err(|e| {
        let problem = Problem {
            loc: e.loc,
            path: String::new(),
            message: format!("invalid YAML: {}", e.message),
        };
        errors(file, vec![problem], Vec::new())
    })
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

/// Applies one variant's patch to the base document and checks the result.
fn evaluate_variant(
    tree: &tree::Node,
    names: &[String],
    name: &str,
    patch: &tree::Node,
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
    let (merged, deletions) = patch::merge_patch(tree, &patch);
    match build::evaluate(&merged, &deletions, names, Some(name)) {
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
