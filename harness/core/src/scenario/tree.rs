//! The YAML document as a tree that remembers where every node and key was written, so that
//! every later stage (merge patch, schema check, semantic checks) can point at `line:column`.
//! Parsing uses `serde-saphyr` with `Spanned` values; YAML 1.1 booleans (`yes`/`no`) stay
//! strings, duplicate keys are an error.

use std::borrow::Cow;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value as Json;
use serde_saphyr::{MessageFormatter, Spanned};

use super::path::{FieldPath, Segment};

/// A 1-based line and column (in characters). `0:0` means "unknown".
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Loc {
    pub line: u32,
    pub column: u32,
}

impl Loc {
    fn of(location: &serde_saphyr::Location) -> Self {
        let clamp = |n: u64| u32::try_from(n).unwrap_or(u32::MAX);
        Self {
            line: clamp(location.line()),
            column: clamp(location.column()),
        }
    }
}

/// A YAML node with the location it was written at.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    pub loc: Loc,
    pub value: Value,
}

/// One `key: value` entry of a mapping.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub key: String,
    pub key_loc: Loc,
    pub value: Node,
}

/// The shape of a node.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    Number(serde_json::Number),
    /// A whole number with more digits than 64 bits hold (`99999999999999999999999`): the
    /// parser reads it as its nearest float, which is what the schema check and decoding see
    /// (`nearest`); `written` keeps the digits for messages.
    BigInteger {
        written: String,
        nearest: serde_json::Number,
    },
    String(String),
    Seq(Vec<Node>),
    Map(Vec<Entry>),
}

/// A YAML syntax problem, with the place the parser stopped.
#[derive(Debug, Clone, PartialEq)]
pub struct SyntaxError {
    pub loc: Loc,
    pub message: String,
}

/// Parses one YAML document into a located tree.
pub fn parse(text: &str) -> Result<Node, SyntaxError> {
    let mut options = serde_saphyr::Options::default();
    options.strict_booleans = true;
    options.with_snippet = false;
    match serde_saphyr::from_str_with_options::<Spanned<Raw>>(text, options) {
        Ok(spanned) => Ok(Node::from_spanned(spanned, text)),
        Err(err) => {
            let loc = err.location().map(|l| Loc::of(&l)).unwrap_or_default();
            let message = serde_saphyr::DefaultMessageFormatter.format_message(&err);
            Err(SyntaxError {
                loc,
                message: for_users(&message),
            })
        }
    }
}

/// Rewrites parser messages that give advice meant for programmers using the parser library.
fn for_users(message: &str) -> String {
    if message.starts_with("multiple YAML documents detected") {
        return "a scenario file holds exactly one YAML document (found a `---` separator)".into();
    }
    // The parser's guard against alias bombs ("budget breached: Nodes { nodes: 250001 }").
    if message.contains("budget breached") {
        return format!(
            "too many YAML aliases: the file expands to more than the parser allows ({message}); an alias bomb? Write the values out, or use fewer `*alias` references"
        );
    }
    message.replace(", set DuplicateKeyPolicy in Options if acceptable", "")
}

impl Node {
    /// The node `spanned` parsed from `text`.
    fn from_spanned(spanned: Spanned<Raw>, text: &str) -> Self {
        let loc = Loc::of(&spanned.referenced);
        let value = match spanned.value {
            Raw::Null => Value::Null,
            Raw::Bool(b) => Value::Bool(b),
            Raw::Number(n) => match whole_number_beyond_64_bits(&n, &spanned.defined, text) {
                Some(written) => Value::BigInteger {
                    written,
                    nearest: n,
                },
                None => Value::Number(n),
            },
            Raw::String(s) => Value::String(s),
            Raw::Seq(items) => Value::Seq(
                items
                    .into_iter()
                    .map(|item| Node::from_spanned(item, text))
                    .collect(),
            ),
            Raw::Map(entries) => Value::Map(
                entries
                    .into_iter()
                    .map(|(key, value)| Entry {
                        key: key.value,
                        key_loc: Loc::of(&key.referenced),
                        value: Node::from_spanned(value, text),
                    })
                    .collect(),
            ),
        };
        Node { loc, value }
    }

    /// The scalar as written, when it is a number the document holds only approximately (a
    /// whole number beyond 64 bits); `None` for any other node.
    pub fn written_number(&self) -> Option<&str> {
        match &self.value {
            Value::BigInteger { written, .. } => Some(written),
            _ => None,
        }
    }

    /// The entries, if this node is a mapping.
    pub fn entries(&self) -> Option<&[Entry]> {
        match &self.value {
            Value::Map(entries) => Some(entries),
            _ => None,
        }
    }

    /// The entry for `key`, if this node is a mapping that has it.
    pub fn entry(&self, key: &str) -> Option<&Entry> {
        self.entries()?.iter().find(|e| e.key == key)
    }

    /// The value for `key`, if this node is a mapping that has it.
    pub fn get(&self, key: &str) -> Option<&Node> {
        self.entry(key).map(|e| &e.value)
    }

    /// The node at `path`, if it exists.
    pub fn at(&self, path: &FieldPath) -> Option<&Node> {
        let mut node = self;
        for segment in path.segments() {
            node = node.child(segment)?.1;
        }
        Some(node)
    }

    fn child(&self, segment: &Segment) -> Option<(Option<Loc>, &Node)> {
        match (segment, &self.value) {
            (Segment::Key(key), Value::Map(_)) => {
                self.entry(key).map(|e| (Some(e.key_loc), &e.value))
            }
            (Segment::Index(i), Value::Seq(items)) => items.get(*i).map(|n| (None, n)),
            _ => None,
        }
    }

    /// Where to point for a problem at `path`: a scalar's own location; for a mapping or
    /// sequence, the key that introduces it (its line reads `key:`); for a path that does not
    /// exist, the nearest existing ancestor.
    pub fn locate(&self, path: &FieldPath) -> Loc {
        let mut node = self;
        let mut key_loc = None;
        for segment in path.segments() {
            match node.child(segment) {
                Some((k, child)) => {
                    key_loc = k;
                    node = child;
                }
                None => break,
            }
        }
        match (&node.value, key_loc) {
            (Value::Map(_) | Value::Seq(_), Some(key_loc)) => key_loc,
            _ => node.loc,
        }
    }

    /// Where the key `key` of the mapping at `path` was written (for unknown-field problems).
    pub fn locate_key(&self, path: &FieldPath, key: &str) -> Loc {
        match self.at(path).and_then(|n| n.entry(key)) {
            Some(entry) => entry.key_loc,
            None => self.locate(path),
        }
    }

    /// The same document as JSON (locations dropped), for schema checks and typed decoding.
    pub fn to_json(&self) -> Json {
        match &self.value {
            Value::Null => Json::Null,
            Value::Bool(b) => Json::Bool(*b),
            Value::Number(n) | Value::BigInteger { nearest: n, .. } => Json::Number(n.clone()),
            Value::String(s) => Json::String(s.clone()),
            Value::Seq(items) => Json::Array(items.iter().map(Node::to_json).collect()),
            Value::Map(entries) => Json::Object(
                entries
                    .iter()
                    .map(|e| (e.key.clone(), e.value.to_json()))
                    .collect(),
            ),
        }
    }
}

/// The digits of a number the parser could only read as a float although it is written as a
/// whole number (`[-+]?[0-9]+`, too many digits for 64 bits), taken from `text` at `location`.
fn whole_number_beyond_64_bits(
    n: &serde_json::Number,
    location: &serde_saphyr::Location,
    text: &str,
) -> Option<String> {
    if !n.is_f64() {
        return None;
    }
    let span = location.span();
    let start = usize::try_from(span.byte_offset()?).ok()?;
    let len = usize::try_from(span.byte_len()?).ok()?;
    let written = text.get(start..start.checked_add(len)?)?.trim();
    let digits = written.strip_prefix(['-', '+']).unwrap_or(written);
    (!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())).then(|| written.to_owned())
}

/// What `serde-saphyr` hands us before locations are unpacked.
enum Raw {
    Null,
    Bool(bool),
    Number(serde_json::Number),
    String(String),
    Seq(Vec<Spanned<Raw>>),
    Map(Vec<(Spanned<String>, Spanned<Raw>)>),
}

impl<'de> Deserialize<'de> for Raw {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(RawVisitor)
    }
}

struct RawVisitor;

impl<'de> Visitor<'de> for RawVisitor {
    type Value = Raw;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("any YAML value")
    }
    fn visit_unit<E>(self) -> Result<Raw, E> {
        Ok(Raw::Null)
    }
    fn visit_none<E>(self) -> Result<Raw, E> {
        Ok(Raw::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Raw, D::Error> {
        Raw::deserialize(deserializer)
    }
    fn visit_bool<E>(self, b: bool) -> Result<Raw, E> {
        Ok(Raw::Bool(b))
    }
    fn visit_i64<E>(self, n: i64) -> Result<Raw, E> {
        Ok(Raw::Number(n.into()))
    }
    fn visit_u64<E>(self, n: u64) -> Result<Raw, E> {
        Ok(Raw::Number(n.into()))
    }
    fn visit_f64<E: de::Error>(self, n: f64) -> Result<Raw, E> {
        serde_json::Number::from_f64(n)
            .map(Raw::Number)
            .ok_or_else(|| E::custom(format!("the number {n} cannot be used here")))
    }
    fn visit_str<E>(self, s: &str) -> Result<Raw, E> {
        Ok(Raw::String(s.to_owned()))
    }
    fn visit_string<E>(self, s: String) -> Result<Raw, E> {
        Ok(Raw::String(s))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Raw, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Raw::Seq(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Raw, A::Error> {
        let mut entries = Vec::new();
        while let Some(entry) = map.next_entry()? {
            entries.push(entry);
        }
        Ok(Raw::Map(entries))
    }
}

/// Renders a scalar for a message (`"20ms"` as `20ms`, mappings as `{...}`).
pub fn render_json(value: &Json) -> Cow<'_, str> {
    match value {
        Json::String(s) => Cow::Borrowed(s),
        Json::Object(_) => Cow::Borrowed("{...}"),
        Json::Array(_) => Cow::Borrowed("[...]"),
        other => Cow::Owned(other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOC: &str = "a: 1\nb:\n  c: [x, 2.5]\n  d: yes\n  e: ~\nf:\n  - { g: true }\n";

    #[test]
    fn records_locations_of_keys_and_values() {
        let root = parse(DOC).unwrap();
        let b = root.entry("b").unwrap();
        assert_eq!(b.key_loc, Loc { line: 2, column: 1 });
        assert_eq!(b.value.loc, Loc { line: 3, column: 3 });
        let c = FieldPath::root().key("b").key("c");
        assert_eq!(
            root.at(&c.index(1)).unwrap().loc,
            Loc {
                line: 3,
                column: 10
            }
        );
    }

    #[test]
    fn locate_points_at_the_key_of_collections_and_at_scalars_themselves() {
        let root = parse(DOC).unwrap();
        let b = FieldPath::root().key("b");
        assert_eq!(root.locate(&b), Loc { line: 2, column: 1 });
        assert_eq!(
            root.locate(&b.key("c").index(0)),
            Loc { line: 3, column: 7 }
        );
        // missing paths fall back to the nearest ancestor
        assert_eq!(
            root.locate(&b.key("zzz").key("y")),
            Loc { line: 2, column: 1 }
        );
        assert_eq!(root.locate_key(&b, "d"), Loc { line: 4, column: 3 });
    }

    #[test]
    fn converts_to_json_keeping_yaml_1_2_scalars() {
        let root = parse(DOC).unwrap();
        let expected = serde_json::json!({
            "a": 1, "b": { "c": ["x", 2.5], "d": "yes", "e": null }, "f": [{ "g": true }]
        });
        assert_eq!(root.to_json(), expected);
    }

    #[test]
    fn whole_numbers_beyond_64_bits_keep_their_digits() {
        let root =
            parse("a: 99999999999999999999999\nb: [-18446744073709551616, 2.5, 7]\n").unwrap();
        let a = root.get("a").unwrap();
        assert_eq!(a.written_number(), Some("99999999999999999999999"));
        assert_eq!(a.to_json(), serde_json::json!(1e23));
        let b = FieldPath::root().key("b");
        assert_eq!(
            root.at(&b.index(0)).unwrap().written_number(),
            Some("-18446744073709551616")
        );
        // A float as written, and a whole number that fits, are ordinary numbers.
        assert_eq!(root.at(&b.index(1)).unwrap().written_number(), None);
        assert_eq!(root.at(&b.index(2)).unwrap().written_number(), None);
        assert_eq!(
            root.at(&b.index(2)).unwrap().to_json(),
            serde_json::json!(7)
        );
    }

    #[test]
    fn duplicate_keys_are_syntax_errors_with_location() {
        let err = parse("a:\n  c: 2\n  c: 3\n").unwrap_err();
        assert_eq!(err.loc, Loc { line: 3, column: 3 });
        assert_eq!(err.message, "duplicate mapping key: c");
    }

    #[test]
    fn syntax_errors_carry_location() {
        let err = parse("a: 1\n b: 2\n").unwrap_err();
        assert_eq!(err.loc, Loc { line: 2, column: 3 });
        assert_eq!(
            err.message,
            "mapping values are not allowed in this context"
        );
    }
}
