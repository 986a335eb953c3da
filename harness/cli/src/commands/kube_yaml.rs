//! Reads Kubernetes objects from YAML as `kubectl get ... -o yaml` prints them: a single
//! object, a list (`kind: List` or `kind: <Kind>List` with `items`), or several documents
//! separated by `---`. Shared by `harness hints` (one kind per file, [`Source::objects`]) and
//! `harness import` (any kinds in any file, [`Source::documents`]). Objects are decoded into `k8s-openapi` types with `serde-saphyr`; every
//! error names the file and, where the parser knows it, the line and column.
//!
//! Documents are decoded one at a time (the kind of each decides how to decode it). To keep
//! line numbers right, each document is decoded with the lines before it blanked out, so the
//! parser's positions are positions in the file.
//!
//! serde-saphyr's own multi-document readers (`from_multiple`, `read`) are not used: they decode
//! every document into one type, while here each document's `kind` (which kubectl prints after
//! `items`) chooses between the object, a list of them and a refusal, and buffering a document
//! to look at its kind first (serde's untagged/flatten content, `serde_json::Value`) drops the
//! parser's line and column from the decoding errors.

use std::path::Path;

use anyhow::{Context, anyhow};
use serde::Deserialize;
use serde::de::DeserializeOwned;

/// A decoded object and the line its document starts on.
#[derive(Debug)]
pub struct Located<T> {
    pub value: T,
    pub line: usize,
}

#[derive(Deserialize)]
struct Probe {
    kind: Option<String>,
}

#[derive(Deserialize)]
#[serde(bound = "T: DeserializeOwned")]
struct RawList<T> {
    #[serde(default)]
    items: Vec<T>,
}

/// A file's name (as given on the command line) and text, for messages that point into it.
#[derive(Debug)]
pub struct Source {
    pub name: String,
    pub text: String,
}

impl Source {
    /// Reads the file at `path`.
    pub fn read(path: &Path) -> anyhow::Result<Source> {
        let name = path.display().to_string();
        let text =
            std::fs::read_to_string(path).with_context(|| format!("{name}: cannot read file"))?;
        Ok(Source { name, text })
    }

    /// The `kind` of each document (as far as it can be read), for messages about a file
    /// given to the wrong flag.
    pub fn kinds(&self) -> Vec<String> {
        #[derive(Deserialize)]
        struct Listed {
            kind: Option<String>,
            #[serde(default)]
            items: Vec<Probe>,
        }
        split_documents(&self.text)
            .iter()
            .filter_map(|doc| serde_saphyr::from_str::<Listed>(&doc.padded()).ok())
            .flat_map(|doc| {
                doc.kind
                    .into_iter()
                    .chain(doc.items.into_iter().filter_map(|i| i.kind))
            })
            .collect()
    }

    /// The file's documents, each with its first line, for readers that look at each
    /// document's `kind` first.
    pub fn documents(&self) -> Vec<Document<'_>> {
        split_documents(&self.text)
    }

    /// Every `T` in the file.
    pub fn objects<T>(&self) -> anyhow::Result<Vec<Located<T>>>
    where
        T: DeserializeOwned + k8s_openapi::Resource,
    {
        parse::<T>(&self.name, &self.text)
    }

    /// `name:line:column` of the first line at or after `from_line` that has `key:` followed by
    /// `value`; `name:from_line` when there is none. For messages about decoded values.
    pub fn locate(&self, from_line: usize, key: &str, value: &str) -> String {
        let found = self
            .text
            .lines()
            .enumerate()
            .skip(from_line.saturating_sub(1))
            .find_map(|(i, line)| {
                let after_key = line.find(&format!("{key}:"))? + key.len() + 1;
                let col = line[after_key..].find(value)? + after_key;
                Some((i + 1, col + 1))
            });
        match found {
            Some((line, col)) => format!("{}:{line}:{col}", self.name),
            None => format!("{}:{from_line}", self.name),
        }
    }
}

/// Parses `text` (named `name` in messages).
pub fn parse<T>(name: &str, text: &str) -> anyhow::Result<Vec<Located<T>>>
where
    T: DeserializeOwned + k8s_openapi::Resource,
{
    let list_kind = format!("{}List", T::KIND);
    let mut objects = Vec::new();
    for doc in split_documents(text) {
        let padded = doc.padded();
        let probe: Probe = serde_saphyr::from_str(&padded).map_err(|e| yaml_error(name, &e))?;
        match probe.kind.as_deref() {
            None => {
                return Err(anyhow!(
                    "{name}:{}:1: document has no `kind` (expected {}, {list_kind} or List)",
                    doc.first_line,
                    T::KIND
                ));
            }
            Some(kind) if kind == T::KIND => {
                let value =
                    serde_saphyr::from_str::<T>(&padded).map_err(|e| yaml_error(name, &e))?;
                objects.push(Located {
                    value,
                    line: doc.first_line,
                });
            }
            Some(kind) if kind == "List" || kind == list_kind => {
                let list = serde_saphyr::from_str::<RawList<T>>(&padded)
                    .map_err(|e| yaml_error(name, &e))?;
                objects.extend(list.items.into_iter().map(|value| Located {
                    value,
                    line: doc.first_line,
                }));
            }
            Some(kind) => {
                let (line, column) = doc.kind_position().unwrap_or((doc.first_line, 1));
                return Err(anyhow!(
                    "{name}:{line}:{column}: expected kind {}, {list_kind} or List, found {kind:?}",
                    T::KIND
                ));
            }
        }
    }
    Ok(objects)
}

/// `file:line:column: message` for a parser error.
pub(crate) fn yaml_error(name: &str, err: &serde_saphyr::Error) -> anyhow::Error {
    let message = err.without_snippet().to_string();
    match err.location() {
        Some(loc) if loc.line() > 0 => {
            // The parser repeats the position at the end of its message; it is already in front.
            let suffix = format!(" at line {}, column {}", loc.line(), loc.column());
            let message = message.strip_suffix(&suffix).unwrap_or(&message);
            anyhow!("{name}:{}:{}: {message}", loc.line(), loc.column())
        }
        _ => anyhow!("{name}: {message}"),
    }
}

/// One YAML document: its 1-based first line and its lines (the `---` marker blanked).
pub(crate) struct Document<'a> {
    pub(crate) first_line: usize,
    /// Number of lines before the document in the file.
    offset: usize,
    lines: Vec<std::borrow::Cow<'a, str>>,
}

impl Document<'_> {
    pub(crate) fn padded(&self) -> String {
        let mut s = "\n".repeat(self.offset);
        for line in &self.lines {
            s.push_str(line);
            s.push('\n');
        }
        s
    }

    /// Line and column of a top-level `kind:` key, for messages about the kind.
    fn kind_position(&self) -> Option<(usize, usize)> {
        self.lines
            .iter()
            .position(|l| l.starts_with("kind:"))
            .map(|i| (self.offset + i + 1, 1))
    }
}

/// Splits at document markers (`---` / `...` at the start of a line). YAML forbids those
/// markers inside content, so a line-based split is exact. Documents holding only comments
/// and blank lines are dropped.
pub(crate) fn split_documents(text: &str) -> Vec<Document<'_>> {
    let mut docs = Vec::new();
    let mut current = Document {
        first_line: 1,
        offset: 0,
        lines: Vec::new(),
    };
    for (i, line) in text.lines().enumerate() {
        let is_marker = |m: &str| {
            line == m || line.starts_with(&format!("{m} ")) || line.starts_with(&format!("{m}\t"))
        };
        if is_marker("---") || is_marker("...") {
            docs.push(std::mem::replace(
                &mut current,
                Document {
                    first_line: i + 1,
                    offset: i,
                    lines: Vec::new(),
                },
            ));
            // Content after `--- ` belongs to the new document; keep its columns.
            if line.starts_with("---") && line.len() > 3 {
                current.lines.push(format!("   {}", &line[3..]).into());
            } else {
                current.lines.push("".into());
            }
        } else {
            current.lines.push(line.into());
        }
    }
    docs.push(current);
    docs.retain(|d| {
        d.lines
            .iter()
            .any(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
    });
    for doc in &mut docs {
        if let Some(first) = doc
            .lines
            .iter()
            .position(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
        {
            doc.first_line = doc.offset + first + 1;
        }
    }
    docs
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::Node;

    #[test]
    fn single_list_and_multi_document_inputs() {
        let single = "apiVersion: v1\nkind: Node\nmetadata:\n  name: a\n";
        assert_eq!(parse::<Node>("n.yaml", single).unwrap().len(), 1);
        let list = "apiVersion: v1\nitems:\n- apiVersion: v1\n  kind: Node\n  metadata: {name: a}\n- metadata: {name: b}\nkind: List\n";
        let nodes = parse::<Node>("n.yaml", list).unwrap();
        assert_eq!(
            nodes
                .iter()
                .map(|n| n.value.metadata.name.clone().unwrap())
                .collect::<Vec<_>>(),
            ["a", "b"]
        );
        let multi = "# nodes\n---\nkind: Node\nmetadata: {name: a}\n---\n# empty\n---\nkind: NodeList\nitems: [{metadata: {name: b}}]\n...\n";
        let nodes = parse::<Node>("n.yaml", multi).unwrap();
        assert_eq!(nodes.len(), 2);
        assert_eq!((nodes[0].line, nodes[1].line), (3, 8));
    }

    #[test]
    fn errors_name_file_line_and_column() {
        let wrong_kind = "kind: Node\nmetadata: {name: a}\n---\napiVersion: v1\nkind: Pod\n";
        let err = parse::<Node>("nodes.yaml", wrong_kind)
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("nodes.yaml:5:1: expected kind Node, NodeList or List, found \"Pod\""),
            "{err}"
        );

        let bad_type = "kind: Node\nmetadata:\n  name: a\n  labels: [x]\n";
        let err = parse::<Node>("nodes.yaml", bad_type)
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("nodes.yaml:4:"), "{err}");

        let bad_yaml = "kind: Node\nmetadata: {name: a\n";
        let err = parse::<Node>("nodes.yaml", bad_yaml)
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("nodes.yaml:"), "{err}");

        let no_kind = "metadata: {name: a}\n";
        let err = parse::<Node>("nodes.yaml", no_kind)
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("nodes.yaml:1:1: document has no `kind`"),
            "{err}"
        );
    }
}
