//! The imported scenario before it is written: each value as YAML flow text with where it came
//! from, and the notes for what could not be read from the objects (written as commented
//! defaults, or as values to fill in, each with its sentence, and listed on stderr).

/// Why a value is what it is, when it was not read as it stands from an object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoteKind {
    /// Not in the objects: a value the user must choose (written, marked FILL IN).
    FillIn,
    /// Not in the objects: the harness's default applies (written commented out).
    Default,
    /// Read from the objects, but the scenario can only hold the nearest equivalent.
    Approximation,
    /// In the objects, but nothing in the scenario reproduces it.
    NotReproduced,
}

impl NoteKind {
    pub fn label(self) -> &'static str {
        match self {
            NoteKind::FillIn => "fill in",
            NoteKind::Default => "default",
            NoteKind::Approximation => "approximated",
            NoteKind::NotReproduced => "not reproduced",
        }
    }
}

/// A sentence about one field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Note {
    pub kind: NoteKind,
    /// The scenario field (`service.serviceTime`), or the object the note is about.
    pub field: String,
    pub text: String,
}

/// One key under `service` (or another section): its flow value and comment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field {
    pub key: String,
    /// YAML flow text: `6`, `{ period: 5s }`; empty for a block value.
    pub value: String,
    /// A block value's lines, relative to the key's indentation plus two.
    pub block: Vec<String>,
    /// Written as a comment only (the default applies).
    pub commented_out: bool,
    /// Said after the value.
    pub comment: Option<String>,
}

impl Field {
    /// A value read from the objects.
    pub fn read(key: &str, value: impl Into<String>) -> Self {
        Field {
            key: key.to_owned(),
            value: value.into(),
            block: Vec::new(),
            commented_out: false,
            comment: None,
        }
    }

    /// A value written as a block of `lines`.
    pub fn block(key: &str, lines: Vec<String>) -> Self {
        Field {
            block: lines,
            ..Field::read(key, "")
        }
    }

    /// The value, with a comment after it.
    pub fn with_comment(mut self, comment: impl Into<String>) -> Self {
        self.comment = Some(comment.into());
        self
    }

    /// Written commented out: the default applies.
    pub fn commented_out(mut self) -> Self {
        self.commented_out = true;
        self
    }

    /// The field's lines at `indent` spaces.
    pub fn lines(&self, indent: usize) -> Vec<String> {
        let pad = " ".repeat(indent);
        if !self.block.is_empty() {
            let mut lines = vec![match &self.comment {
                Some(c) => format!("{pad}{}:    # {c}", self.key),
                None => format!("{pad}{}:", self.key),
            }];
            lines.extend(self.block.iter().map(|l| format!("{pad}  {l}")));
            return lines;
        }
        let body = format!("{}: {}", self.key, self.value);
        let line = match (&self.comment, self.commented_out) {
            (Some(c), true) => format!("{pad}# {body}    # {c}"),
            (None, true) => format!("{pad}# {body}"),
            (Some(c), false) => format!("{pad}{body}    # {c}"),
            (None, false) => format!("{pad}{body}"),
        };
        vec![line]
    }
}

/// Quotes a string for YAML when plain text would not stay a string.
pub fn quoted(s: &str) -> String {
    serde_json::to_string(s).expect("a string serializes")
}

/// Seconds as a scenario duration (`30s`, `0s`).
pub fn seconds(s: i64) -> String {
    format!("{s}s")
}

/// `text` as a DNS label: lower case, `-` for anything else than a letter or digit, at most 63
/// characters, no `-` at either end.
pub fn dns_label(text: &str) -> String {
    let mut name: String = text
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    name.truncate(63);
    name.trim_matches('-').to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dns_labels_from_any_text() {
        assert_eq!(dns_label("from-us-east-1a"), "from-us-east-1a");
        assert_eq!(
            dns_label("Checkout_API.v2-imported"),
            "checkout-api-v2-imported"
        );
        assert_eq!(dns_label(&"x".repeat(70)).len(), 63);
    }

    proptest::proptest! {
        #[test]
        fn any_text_gives_a_label_kubernetes_accepts(text in "\\PC{0,80}") {
            let label = dns_label(&text);
            proptest::prop_assert!(label.len() <= 63);
            proptest::prop_assert!(label.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-'));
            proptest::prop_assert!(!label.starts_with('-') && !label.ends_with('-'));
        }
    }
}
