//! Field paths inside a scenario document (`load.generators[0].zone`): how diagnostics name the
//! place they talk about, independent of where that place sits in the file.

use std::fmt;

/// One step into a document: a mapping key or a sequence index.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Segment {
    /// A mapping key.
    Key(String),
    /// A sequence index (0-based).
    Index(usize),
}

/// A path from the document root to a node, displayed as `load.generators[0].zone`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct FieldPath(Vec<Segment>);

impl FieldPath {
    /// The document root (displays as the empty string).
    pub fn root() -> Self {
        Self::default()
    }

    /// This path extended by a mapping key.
    pub fn key(&self, key: &str) -> Self {
        let mut segments = self.0.clone();
        segments.push(Segment::Key(key.to_owned()));
        Self(segments)
    }

    /// This path extended by a sequence index.
    pub fn index(&self, index: usize) -> Self {
        let mut segments = self.0.clone();
        segments.push(Segment::Index(index));
        Self(segments)
    }

    /// The steps from the root.
    pub fn segments(&self) -> &[Segment] {
        &self.0
    }

    /// Whether `self` is `prefix` or lies inside it.
    pub fn starts_with(&self, prefix: &FieldPath) -> bool {
        self.0.starts_with(&prefix.0)
    }
}

impl FromIterator<Segment> for FieldPath {
    fn from_iter<I: IntoIterator<Item = Segment>>(iter: I) -> Self {
        Self(iter.into_iter().collect())
    }
}

impl fmt::Display for FieldPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, segment) in self.0.iter().enumerate() {
            match segment {
                Segment::Key(key) if i == 0 => f.write_str(key)?,
                Segment::Key(key) => write!(f, ".{key}")?,
                Segment::Index(index) => write!(f, "[{index}]")?,
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn displays_keys_with_dots_and_indices_with_brackets() {
        let path = FieldPath::root()
            .key("load")
            .key("generators")
            .index(0)
            .key("zone");
        assert_eq!(path.to_string(), "load.generators[0].zone");
        assert!(path.starts_with(&FieldPath::root().key("load").key("generators")));
        assert!(!FieldPath::root().key("load").starts_with(&path));
    }

    #[test]
    fn root_displays_empty() {
        assert_eq!(FieldPath::root().to_string(), "");
    }

    #[test]
    fn leading_index_has_no_dot() {
        let path = FieldPath::root().index(2).key("a");
        assert_eq!(path.to_string(), "[2].a");
    }
}
