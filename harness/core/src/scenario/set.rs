//! Overrides of single values from the command line (`harness run FILE --set
//! load.duration=10s`): a path into the document — keys joined by `.`, list entries as `[0]` or
//! by their name, `[ingress-2a]` — and a YAML scalar. They are applied to the located YAML tree
//! after the variant's patch and before any check, so the value is validated like one written
//! in the file, and a problem with it points at the line it replaced, marked with the override.
//! Other commands that vary one value per run (a matrix of runs) use the same paths.

use std::fmt;

use super::path::FieldPath;
use super::tree::{self, Entry, Node, Value};

/// One `PATH=VALUE`.
#[derive(Debug, Clone, PartialEq)]
pub struct Override {
    path: Vec<Step>,
    /// The path as written.
    pub path_text: String,
    /// The value as written.
    pub value_text: String,
    value: Value,
}

/// One step of an override path.
#[derive(Debug, Clone, PartialEq)]
enum Step {
    Key(String),
    Index(usize),
    /// The list entry whose `name` is this.
    Named(String),
}

impl fmt::Display for Override {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "--set {}={}", self.path_text, self.value_text)
    }
}

impl Override {
    /// Parses `PATH=VALUE`; the value is read as a YAML scalar (`10s`, `4`, `true`, `"25%"`,
    /// `null` to remove the key, as in a variant).
    pub fn parse(text: &str) -> Result<Self, String> {
        let (path, value) = text
            .split_once('=')
            .ok_or_else(|| format!("`{text}`: expected PATH=VALUE, e.g. load.duration=10s"))?;
        Self::new(path.trim(), value.trim())
    }

    /// The override of `path` with `value` (a YAML scalar).
    pub fn new(path: &str, value: &str) -> Result<Self, String> {
        let steps = parse_path(path).map_err(|e| format!("`{path}`: {e}"))?;
        if matches!(steps.first(), Some(Step::Key(k)) if k == "variants") {
            return Err(format!(
                "`{path}`: variants cannot be changed from the command line; select one with --variant"
            ));
        }
        let parsed = if value.is_empty() {
            Value::String(String::new())
        } else {
            tree::parse(value)
                .map_err(|e| format!("`{path}={value}`: the value is not YAML: {}", e.message))?
                .value
        };
        if matches!(parsed, Value::Map(_) | Value::Seq(_)) {
            return Err(format!(
                "`{path}={value}`: --set takes a single value (a number, a word, true/false or \
                 null), not a mapping or a list"
            ));
        }
        Ok(Self {
            path: steps,
            path_text: path.to_owned(),
            value_text: value.to_owned(),
            value: parsed,
        })
    }
}

fn parse_path(text: &str) -> Result<Vec<Step>, String> {
    let mut steps = Vec::new();
    for part in text.split('.') {
        let (key, mut rest) = match part.find('[') {
            Some(i) => (&part[..i], &part[i..]),
            None => (part, ""),
        };
        if key.is_empty() && (steps.is_empty() || rest.is_empty()) {
            return Err("empty key; write keys joined by `.`, such as load.duration".into());
        }
        if !key.is_empty() {
            steps.push(Step::Key(key.to_owned()));
        }
        while !rest.is_empty() {
            let close = rest
                .find(']')
                .filter(|_| rest.starts_with('['))
                .ok_or("unclosed `[`; write list entries as [0] or [name]")?;
            let inner = &rest[1..close];
            steps.push(match inner.parse::<usize>() {
                Ok(i) => Step::Index(i),
                Err(_) if !inner.is_empty() => Step::Named(inner.to_owned()),
                Err(_) => return Err("empty `[]`; write [0] or [name]".into()),
            });
            rest = &rest[close + 1..];
        }
    }
    Ok(steps)
}

/// Applies `overrides` in order; returns the field path and location each one set (for
/// marking problems with them), or what is wrong with one.
pub(crate) fn apply(
    doc: &mut Node,
    overrides: &[Override],
) -> Result<Vec<(FieldPath, Override)>, String> {
    let mut applied = Vec::new();
    for o in overrides {
        let path = set(doc, o).map_err(|e| format!("{o}: {e}"))?;
        applied.push((path, o.clone()));
    }
    Ok(applied)
}

/// Sets one value, creating missing mappings on the way; returns the field path it resolved
/// to (list entries by index).
fn set(doc: &mut Node, o: &Override) -> Result<FieldPath, String> {
    let mut node = doc;
    let mut path = FieldPath::root();
    let last = o.path.len() - 1;
    for (i, step) in o.path.iter().enumerate() {
        let here = path.to_string();
        let at = |p: &str| {
            if p.is_empty() {
                "the document".to_owned()
            } else {
                format!("`{p}`")
            }
        };
        match step {
            Step::Key(key) => {
                let loc = node.loc;
                let Value::Map(entries) = &mut node.value else {
                    return Err(format!(
                        "{} is not a mapping, so it has no `{key}`",
                        at(&here)
                    ));
                };
                if i == last && o.value == Value::Null {
                    entries.retain(|e| &e.key != key);
                    return Ok(path.key(key));
                }
                let index = match entries.iter().position(|e| &e.key == key) {
                    Some(index) => index,
                    None => {
                        entries.push(Entry {
                            key: key.clone(),
                            key_loc: loc,
                            value: Node {
                                loc,
                                value: Value::Map(Vec::new()),
                            },
                        });
                        entries.len() - 1
                    }
                };
                path = path.key(key);
                node = &mut entries[index].value;
            }
            Step::Index(_) | Step::Named(_) => {
                let Value::Seq(items) = &mut node.value else {
                    return Err(format!("{} is not a list", at(&here)));
                };
                let index = match step {
                    Step::Index(index) if *index < items.len() => *index,
                    Step::Index(index) => {
                        let n = items.len();
                        let entries = if n == 1 { "entry" } else { "entries" };
                        return Err(format!(
                            "`{here}` has {n} {entries}, so there is no [{index}]"
                        ));
                    }
                    Step::Named(name) => items
                        .iter()
                        .position(|item| item.get("name").is_some_and(|n| is_string(n, name)))
                        .ok_or_else(|| {
                            let names: Vec<String> = items
                                .iter()
                                .filter_map(|item| match &item.get("name")?.value {
                                    Value::String(s) => Some(s.clone()),
                                    _ => None,
                                })
                                .collect();
                            format!(
                                "no entry of `{here}` is named `{name}`; names there: {}",
                                if names.is_empty() {
                                    "(none)".into()
                                } else {
                                    names.join(", ")
                                }
                            )
                        })?,
                    Step::Key(_) => unreachable!("handled above"),
                };
                path = path.index(index);
                node = &mut items[index];
            }
        }
    }
    if matches!(node.value, Value::Map(ref e) if !e.is_empty())
        || matches!(node.value, Value::Seq(_))
    {
        return Err(format!(
            "`{path}` holds a {}, not a single value; set one of its fields",
            if matches!(node.value, Value::Seq(_)) {
                "list"
            } else {
                "mapping"
            }
        ));
    }
    // The value takes the place (and location) of the one it replaces.
    node.value = o.value.clone();
    Ok(path)
}

fn is_string(node: &Node, text: &str) -> bool {
    matches!(&node.value, Value::String(s) if s == text)
}

/// Whether a problem at `problem_path` concerns the value an override set at `set_path`.
pub(crate) fn concerns(problem_path: &str, set_path: &FieldPath) -> bool {
    let set = set_path.to_string();
    problem_path == set
        || problem_path.starts_with(&format!("{set}."))
        || problem_path.starts_with(&format!("{set}["))
}

/// The paths of the scenario format (from its JSON Schema) whose last key is `key`, e.g.
/// `duration` → `load.duration`; list entries appear as `[0]`. For pointing a mistyped
/// command-line flag at `--set`.
pub fn paths_named(key: &str) -> Vec<String> {
    let schema = super::schema::json_schema();
    let mut found = Vec::new();
    walk(&schema, &schema, String::new(), key, 0, &mut found);
    found.sort();
    found.dedup();
    found
}

fn walk(
    root: &serde_json::Value,
    node: &serde_json::Value,
    prefix: String,
    key: &str,
    depth: usize,
    found: &mut Vec<String>,
) {
    if depth > 12 {
        return;
    }
    if let Some(target) = node.get("$ref").and_then(|r| r.as_str())
        && let Some(resolved) = root.pointer(target.trim_start_matches('#'))
    {
        walk(root, resolved, prefix.clone(), key, depth + 1, found);
    }
    if let Some(props) = node.get("properties").and_then(|p| p.as_object()) {
        for (name, sub) in props {
            if prefix.is_empty() && name == "variants" {
                continue;
            }
            let path = if prefix.is_empty() {
                name.clone()
            } else {
                format!("{prefix}.{name}")
            };
            if name == key {
                found.push(path.clone());
            }
            walk(root, sub, path, key, depth + 1, found);
        }
    }
    if let Some(items) = node.get("items") {
        walk(root, items, format!("{prefix}[0]"), key, depth + 1, found);
    }
    for combinator in ["anyOf", "oneOf", "allOf"] {
        for sub in node
            .get(combinator)
            .and_then(|c| c.as_array())
            .into_iter()
            .flatten()
        {
            walk(root, sub, prefix.clone(), key, depth + 1, found);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOC: &str = "load:\n  duration: 40s\n  generators:\n    - { name: a, rate: 10 }\n    - { name: b, rate: 20 }\nservice:\n  name: s\n";

    fn applied(overrides: &[&str]) -> Result<serde_json::Value, String> {
        let mut doc = tree::parse(DOC).unwrap();
        let parsed: Vec<Override> = overrides
            .iter()
            .map(|o| Override::parse(o))
            .collect::<Result<_, _>>()?;
        apply(&mut doc, &parsed)?;
        Ok(doc.to_json())
    }

    #[test]
    fn sets_scalars_by_key_index_and_name_and_creates_missing_mappings() {
        let json = applied(&[
            "load.duration=10s",
            "load.generators[0].rate=max",
            "load.generators[b].rate=35.5",
            "service.sidecar.maxConcurrency=8",
            "service.name=null",
        ])
        .unwrap();
        assert_eq!(json["load"]["duration"], "10s");
        assert_eq!(json["load"]["generators"][0]["rate"], "max");
        assert_eq!(json["load"]["generators"][1]["rate"], 35.5);
        assert_eq!(json["service"]["sidecar"]["maxConcurrency"], 8);
        assert!(
            json["service"].get("name").is_none(),
            "null removes, as in a variant"
        );
    }

    #[test]
    fn a_replaced_value_keeps_the_location_of_the_one_it_replaces() {
        let mut doc = tree::parse(DOC).unwrap();
        let before = doc.locate(&FieldPath::root().key("load").key("duration"));
        let path = set(&mut doc, &Override::parse("load.duration=30").unwrap()).unwrap();
        assert_eq!(doc.locate(&path), before);
        assert!(concerns("load.duration", &path));
        assert!(!concerns("load.durationX", &path));
    }

    #[test]
    fn finds_the_format_paths_a_key_names() {
        assert_eq!(paths_named("duration"), ["load.duration"]);
        assert!(paths_named("rate").contains(&"load.generators[0].rate".to_string()));
        assert!(
            paths_named("maxConcurrency").contains(&"service.sidecar.maxConcurrency".to_string())
        );
        assert!(paths_named("noSuchField").is_empty());
    }

    #[test]
    fn says_what_is_wrong_with_a_path_or_value() {
        let e = |o: &[&str]| applied(o).unwrap_err();
        assert_eq!(
            e(&["load.generators[5].rate=1"]),
            "--set load.generators[5].rate=1: `load.generators` has 2 entries, so there is no [5]"
        );
        assert_eq!(
            e(&["load.generators[c].rate=1"]),
            "--set load.generators[c].rate=1: no entry of `load.generators` is named `c`; names there: a, b"
        );
        assert_eq!(
            e(&["load.duration.x=1"]),
            "--set load.duration.x=1: `load.duration` is not a mapping, so it has no `x`"
        );
        assert_eq!(
            e(&["load=1"]),
            "--set load=1: `load` holds a mapping, not a single value; set one of its fields"
        );
        assert!(e(&["load.duration"]).starts_with("`load.duration`: expected PATH=VALUE"));
        assert!(e(&["variants.x.load=1"]).contains("select one with --variant"));
        assert!(e(&["load.duration=[1, 2]"]).contains("not a mapping or a list"));
    }
}
