//! Problems found in a scenario file: each with `file:line:column`, the field path, what is
//! wrong and what would be valid. Every stage collects problems instead of stopping at the
//! first, and they are reported together, in file order.

use std::collections::HashSet;
use std::fmt;

use super::patch::Deletion;
use super::path::FieldPath;
use super::tree::{Loc, Node};

/// One problem in a scenario file.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Diagnostic {
    /// The file as the user named it.
    pub file: String,
    /// 1-based line; 0 when the problem concerns the whole file (e.g. it cannot be read).
    pub line: u32,
    /// 1-based column (in characters); 0 when unknown.
    pub column: u32,
    /// The variant whose evaluation found the problem, when the base document does not have it.
    pub variant: Option<String>,
    /// The field path, e.g. `load.generators[0].zone`; empty for the document as a whole.
    pub path: String,
    /// What is wrong and what would be valid.
    pub message: String,
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.file)?;
        if self.line > 0 {
            write!(f, ":{}:{}", self.line, self.column)?;
        }
        f.write_str(": ")?;
        if let Some(variant) = &self.variant {
            write!(f, "variant `{variant}`: ")?;
        }
        if !self.path.is_empty() {
            write!(f, "{}: ", self.path)?;
        }
        f.write_str(&self.message)
    }
}

/// Every problem found in a scenario file, in file order. Displays one line per problem.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct ScenarioErrors {
    pub diagnostics: Vec<Diagnostic>,
}

impl fmt::Display for ScenarioErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, diagnostic) in self.diagnostics.iter().enumerate() {
            if i > 0 {
                f.write_str("\n")?;
            }
            write!(f, "{diagnostic}")?;
        }
        Ok(())
    }
}

impl ScenarioErrors {
    /// A single problem about the whole file (e.g. it cannot be read).
    pub fn whole_file(file: &str, message: impl Into<String>) -> Self {
        Self {
            diagnostics: vec![Diagnostic {
                file: file.to_owned(),
                line: 0,
                column: 0,
                variant: None,
                path: String::new(),
                message: message.into(),
            }],
        }
    }
}

/// A problem before it is tied to a file name and variant.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct Problem {
    pub loc: Loc,
    pub path: String,
    pub message: String,
}

impl Problem {
    pub fn into_diagnostic(self, file: &str, variant: Option<&str>) -> Diagnostic {
        Diagnostic {
            file: file.to_owned(),
            line: self.loc.line,
            column: self.loc.column,
            variant: variant.map(str::to_owned),
            path: self.path,
            message: self.message,
        }
    }
}

/// Collects problems, locating each field path in the document tree. Once the structural
/// check is [sealed](Problems::seal), later problems at a path that already has a structural
/// problem are dropped: one problem per field, the structural one first.
pub(crate) struct Problems<'t> {
    tree: &'t Node,
    deletions: &'t [Deletion],
    found: Vec<Problem>,
    flagged: HashSet<String>,
    sealed: bool,
}

impl<'t> Problems<'t> {
    /// Problems in `tree`; `deletions` are the keys a variant's patch deleted.
    pub fn new(tree: &'t Node, deletions: &'t [Deletion]) -> Self {
        Self {
            tree,
            deletions,
            found: Vec::new(),
            flagged: HashSet::new(),
            sealed: false,
        }
    }

    /// A problem with the value at `path`.
    pub fn at(&mut self, path: &FieldPath, message: impl Into<String>) {
        let loc = self.tree.locate(path);
        self.push(loc, path.to_string(), message.into());
    }

    /// A problem with the key `key` of the mapping at `path` (e.g. an unknown field).
    pub fn at_key(&mut self, path: &FieldPath, key: &str, message: impl Into<String>) {
        let loc = self.tree.locate_key(path, key);
        self.push(loc, path.key(key).to_string(), message.into());
    }

    /// A required `field` missing from the mapping at `path`; when a variant deleted it, the
    /// problem points at the deletion.
    pub fn missing(&mut self, path: &FieldPath, field: &str) {
        let message = format!("missing required field `{field}`");
        let field_path = path.key(field);
        match self.deletions.iter().find(|d| d.path == field_path) {
            Some(deletion) => self.push(
                deletion.loc,
                path.to_string(),
                format!("{message} (the variant deletes it)"),
            ),
            None => self.at(path, message),
        }
    }

    fn push(&mut self, loc: Loc, path: String, message: String) {
        if self.sealed && self.flagged.contains(&path) {
            return;
        }
        if !self.sealed {
            self.flagged.insert(path.clone());
        }
        let problem = Problem { loc, path, message };
        if !self.found.contains(&problem) {
            self.found.push(problem);
        }
    }

    /// Ends the structural check: from now on, fields it flagged get no further problems.
    pub fn seal(&mut self) {
        self.sealed = true;
    }

    /// The digits of the number at `path` when the document holds it only approximately (a
    /// whole number beyond 64 bits, see [`Node::written_number`]).
    pub fn written_number(&self, path: &FieldPath) -> Option<&'t str> {
        self.tree.at(path)?.written_number()
    }

    /// The line `path` was written on, for messages like "first defined at line 9".
    pub fn line_of(&self, path: &FieldPath) -> u32 {
        self.tree.locate(path).line
    }

    pub fn is_empty(&self) -> bool {
        self.found.is_empty()
    }

    /// The problems, in file order.
    pub fn into_sorted(mut self) -> Vec<Problem> {
        self.found
            .sort_by(|a, b| (a.loc, &a.path).cmp(&(b.loc, &b.path)));
        self.found
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn diagnostic(line: u32, variant: Option<&str>, path: &str) -> Diagnostic {
        Diagnostic {
            file: "scenarios/x.yaml".into(),
            line,
            column: 9,
            variant: variant.map(str::to_owned),
            path: path.into(),
            message: "bad".into(),
        }
    }

    #[test]
    fn displays_file_line_column_path_message() {
        let d = diagnostic(12, None, "load.generators[0].zone");
        assert_eq!(
            d.to_string(),
            "scenarios/x.yaml:12:9: load.generators[0].zone: bad"
        );
    }

    #[test]
    fn displays_variant_and_omits_empty_path_and_unknown_line() {
        assert_eq!(
            diagnostic(3, Some("fixed"), "").to_string(),
            "scenarios/x.yaml:3:9: variant `fixed`: bad"
        );
        let whole = ScenarioErrors::whole_file("x.yaml", "cannot read");
        assert_eq!(whole.to_string(), "x.yaml: cannot read");
    }

    #[test]
    fn errors_display_one_line_each() {
        let errors = ScenarioErrors {
            diagnostics: vec![diagnostic(1, None, "a"), diagnostic(2, None, "b")],
        };
        assert_eq!(
            errors.to_string(),
            "scenarios/x.yaml:1:9: a: bad\nscenarios/x.yaml:2:9: b: bad"
        );
    }
}
