//! Variants: JSON Merge Patch (RFC 7386) applied to the located YAML tree. Mappings merge
//! recursively, anything else (sequences included) replaces wholesale, `null` deletes. Nodes
//! that come from the patch keep the patch's locations, so a problem introduced by a variant
//! points at the variant's lines.

use super::path::FieldPath;
use super::tree::{Entry, Loc, Node, Value};

/// A key the patch deleted (`key: null` over an existing key), and where the `null` was written.
#[derive(Debug, Clone, PartialEq)]
pub struct Deletion {
    pub path: FieldPath,
    pub loc: Loc,
}

/// Applies `patch` to `target` (RFC 7386 `MergePatch(Target, Patch)`). Returns the result and
/// the keys the patch deleted. A key whose mapping the patch merges into takes the patch's
/// location: problems with the merged mapping as a whole point at the variant.
pub fn merge_patch(target: &Node, patch: &Node) -> (Node, Vec<Deletion>) {
    let mut deletions = Vec::new();
    let merged = merge_at(target, patch, &FieldPath::root(), &mut deletions);
    (merged, deletions)
}

fn merge_at(target: &Node, patch: &Node, path: &FieldPath, deletions: &mut Vec<Deletion>) -> Node {
    let Value::Map(patch_entries) = &patch.value else {
        return patch.clone();
    };
    let mut entries = match &target.value {
        Value::Map(entries) => entries.clone(),
        _ => Vec::new(),
    };
    for patch_entry in patch_entries {
        let existing = entries.iter().position(|e| e.key == patch_entry.key);
        let key_path = path.key(&patch_entry.key);
        match (existing, &patch_entry.value.value) {
            (Some(i), Value::Null) => {
                entries.remove(i);
                deletions.push(Deletion {
                    path: key_path,
                    loc: patch_entry.key_loc,
                });
            }
            (None, Value::Null) => {}
            (Some(i), _) => {
                let merged = merge_at(&entries[i].value, &patch_entry.value, &key_path, deletions);
                entries[i] = Entry {
                    key: patch_entry.key.clone(),
                    key_loc: patch_entry.key_loc,
                    value: merged,
                };
            }
            (None, _) => {
                let absent = Node {
                    loc: patch_entry.value.loc,
                    value: Value::Null,
                };
                let value = merge_at(&absent, &patch_entry.value, &key_path, deletions);
                entries.push(Entry {
                    key: patch_entry.key.clone(),
                    key_loc: patch_entry.key_loc,
                    value,
                });
            }
        }
    }
    // The document root keeps its own location (it has no key to point at).
    let root_of_mapping = path.segments().is_empty() && matches!(target.value, Value::Map(_));
    Node {
        loc: if root_of_mapping {
            target.loc
        } else {
            patch.loc
        },
        value: Value::Map(entries),
    }
}

#[cfg(test)]
mod tests {
    use super::super::tree::parse;
    use super::*;
    use serde_json::json;

    fn merged(target: &str, patch: &str) -> serde_json::Value {
        merge_patch(&parse(target).unwrap(), &parse(patch).unwrap())
            .0
            .to_json()
    }

    /// The examples of RFC 7386 appendix A.
    #[test]
    fn rfc7386_appendix_a_examples() {
        let cases = [
            ("{a: b}", "{a: c}", json!({"a": "c"})),
            ("{a: b}", "{b: c}", json!({"a": "b", "b": "c"})),
            ("{a: b}", "{a: null}", json!({})),
            ("{a: b, b: c}", "{a: null}", json!({"b": "c"})),
            ("{a: [b]}", "{a: c}", json!({"a": "c"})),
            ("{a: c}", "{a: [b]}", json!({"a": ["b"]})),
            (
                "{a: {b: c}}",
                "{a: {b: d, c: null}}",
                json!({"a": {"b": "d"}}),
            ),
            ("{a: [{b: c}]}", "{a: [1]}", json!({"a": [1]})),
            ("[a, b]", "[c, d]", json!(["c", "d"])),
            ("{a: b}", "[c]", json!(["c"])),
            ("{a: foo}", "null", json!(null)),
            ("{a: foo}", "bar", json!("bar")),
            ("{e: null}", "{a: 1}", json!({"e": null, "a": 1})),
            ("[1, 2]", "{a: b, c: null}", json!({"a": "b"})),
            ("{}", "{a: {bb: {ccc: null}}}", json!({"a": {"bb": {}}})),
        ];
        for (target, patch, expected) in cases {
            assert_eq!(merged(target, patch), expected, "{target} + {patch}");
        }
    }

    #[test]
    fn patched_nodes_keep_the_patch_locations() {
        let target = parse("a:\n  b: 1\n  c: 2\n").unwrap();
        let patch = parse("\n\n\na:\n  c: 3\n  d: 4\n").unwrap();
        let (result, deletions) = merge_patch(&target, &patch);
        let a = result.entry("a").unwrap();
        assert_eq!(a.key_loc, Loc { line: 4, column: 1 });
        assert_eq!(a.value.get("b").unwrap().loc, Loc { line: 2, column: 6 });
        assert_eq!(a.value.get("c").unwrap().loc, Loc { line: 5, column: 6 });
        assert_eq!(
            a.value.entry("d").unwrap().key_loc,
            Loc { line: 6, column: 3 }
        );
        assert!(deletions.is_empty());
    }

    #[test]
    fn deletions_are_recorded_with_the_patch_location() {
        let target = parse("a:\n  b: 1\n  c: 2\n").unwrap();
        let patch = parse("a: { b: null, zz: null }\n").unwrap();
        let (result, deletions) = merge_patch(&target, &patch);
        assert_eq!(result.to_json(), json!({"a": {"c": 2}}));
        let path = FieldPath::root().key("a").key("b");
        assert_eq!(
            deletions,
            vec![Deletion {
                path,
                loc: Loc { line: 1, column: 6 }
            }]
        );
    }
}
