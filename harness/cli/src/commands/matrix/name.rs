//! The directory name of each matrix cell, under the matrix's output directory: readable
//! (`ingress.version-v0.11`; several axes joined with `_`:
//! `kind.nodeImage-v1.33.1_load.duration-30s`), safe on any file system and in a shell, and
//! unique among the cells.
//!
//! Each axis gives `<path>-<value>`: a list entry `[name]` of the path becomes `.name`
//! (`load.generators[g].rate` → `load.generators.g.rate`), and every character other than
//! ASCII letters, digits, `.`, `+` and `-` becomes `-` (`/`, `:`, `=`, spaces, `(`, `_`, …; a
//! run of them one `-`). A name longer than [`MAX_LEN`] is cut and ends with a hash of the
//! whole. Names that would still be the same (ignoring case, as macOS and Windows file systems
//! do) — `a/b` and `a b`, two node images of one Kubernetes version — each end with `~N`, N
//! the cell's number in the matrix (as in `1.` of the listing and `m1` of its kind cluster):
//! `~` appears in no other name, so the result is unique, and it is the same for the same
//! command line.

use std::collections::HashMap;

/// The longest name before the cell's `~N`, well under the 255 bytes file systems allow.
pub const MAX_LEN: usize = 120;

/// The directory names of `combos` (each a list of (axis path, value as shown)), in order.
pub fn cell_names(combos: &[Vec<(String, String)>]) -> Vec<String> {
    let readable: Vec<String> = combos.iter().map(|c| readable(c)).collect();
    let mut count: HashMap<String, usize> = HashMap::new();
    for name in &readable {
        *count.entry(name.to_ascii_lowercase()).or_default() += 1;
    }
    readable
        .into_iter()
        .enumerate()
        .map(|(index, name)| {
            if count[&name.to_ascii_lowercase()] > 1 {
                format!("{name}~{}", index + 1)
            } else {
                name
            }
        })
        .collect()
}

/// `path-value` for each axis, joined with `_`, cut to [`MAX_LEN`].
fn readable(combo: &[(String, String)]) -> String {
    let name = combo
        .iter()
        .map(|(path, value)| {
            let value = match safe(value) {
                v if v.is_empty() => "-".to_owned(),
                v => v,
            };
            format!("{}-{value}", safe(&path.replace(']', "").replace('[', ".")))
        })
        .collect::<Vec<_>>()
        .join("_");
    if name.len() <= MAX_LEN {
        return name;
    }
    // ASCII only by now, so any byte is a character boundary.
    let hash = format!("{:08x}", fnv1a(&name) as u32);
    format!(
        "{}-{hash}",
        name[..MAX_LEN - 9].trim_end_matches(['-', '.'])
    )
}

/// `text` with every character but `[A-Za-z0-9.+-]` turned into `-`, a run of them into one,
/// and no `-` or `.` at either end (no hidden file, nothing read as an option).
fn safe(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        let c = if c.is_ascii_alphanumeric() || matches!(c, '.' | '+' | '-') {
            c
        } else {
            '-'
        };
        if !(c == '-' && out.ends_with('-')) {
            out.push(c);
        }
    }
    out.trim_matches(['-', '.']).to_owned()
}

/// FNV-1a, 64 bits: a hash that stays the same across Rust releases, unlike the standard
/// library's.
fn fnv1a(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use proptest::prelude::*;

    use super::*;

    fn combo(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(p, v)| ((*p).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn names_read_as_the_axes_and_their_values() {
        let names = cell_names(&[
            combo(&[("ingress.version", "v0.11")]),
            combo(&[("ingress.version", "v0.16")]),
        ]);
        assert_eq!(names, ["ingress.version-v0.11", "ingress.version-v0.16"]);
        let names = cell_names(&[
            combo(&[("kind.nodeImage", "v1.33.1"), ("load.duration", "30s")]),
            combo(&[
                ("load.generators[elb-clients].rate", "32"),
                ("ingress.balanceAlgorithm", "random(2)"),
            ]),
            combo(&[("service.sidecar.queueTimeout", "1m 30s")]),
            combo(&[("metadata.name", "a/b:c=d e_f")]),
        ]);
        assert_eq!(
            names,
            [
                "kind.nodeImage-v1.33.1_load.duration-30s",
                "load.generators.elb-clients.rate-32_ingress.balanceAlgorithm-random-2",
                "service.sidecar.queueTimeout-1m-30s",
                "metadata.name-a-b-c-d-e-f",
            ]
        );
    }

    #[test]
    fn names_that_would_collide_end_with_the_cell_number() {
        let names = cell_names(&[
            combo(&[("x", "a/b")]),
            combo(&[("x", "c")]),
            combo(&[("x", "a b")]),
            combo(&[("x", "A:B")]),
        ]);
        assert_eq!(names, ["x-a-b~1", "x-c", "x-a-b~3", "x-A-B~4"]);
        // Nothing but unsafe characters still names the value.
        assert_eq!(cell_names(&[combo(&[("x", "///")])]), ["x--"]);
    }

    #[test]
    fn long_names_are_cut_and_end_with_a_hash_of_the_whole() {
        let long = "9".repeat(300);
        let other = format!("{}8", "9".repeat(299));
        let names = cell_names(&[combo(&[("x", &long)]), combo(&[("x", &other)])]);
        for name in &names {
            assert!(name.len() <= MAX_LEN, "{name}");
            assert!(name.starts_with("x-999"), "{name}");
        }
        assert_ne!(names[0], names[1], "the hash tells them apart");
    }

    /// A path as `--matrix` takes it: keys, maybe a list entry by index or by name.
    fn any_path() -> impl Strategy<Value = String> {
        prop_oneof![
            "[a-z][a-zA-Z]{0,8}(\\.[a-z][a-zA-Z]{0,8}){0,3}",
            "[a-z]{1,6}\\.[a-z]{1,6}\\[[a-z0-9-]{1,6}\\]\\.[a-z]{1,6}",
        ]
    }

    /// Any value, with the characters file systems and shells care about likely.
    fn any_value() -> impl Strategy<Value = String> {
        prop_oneof![
            "[a-zA-Z0-9.]{1,12}",
            "[a-z0-9/:= _()\\[\\]~.\\\\\"'*?-]{1,12}",
            any::<String>().prop_filter("not empty", |s| !s.is_empty()),
            "[0-9]{100,200}",
        ]
    }

    fn any_cells() -> impl Strategy<Value = Vec<Vec<(String, String)>>> {
        prop::collection::vec(
            prop::collection::vec((any_path(), any_value()), 1..4),
            1..12,
        )
        .prop_map(|mut combos| {
            // The cells of a matrix are distinct combinations.
            let mut seen = HashSet::new();
            combos.retain(|c| seen.insert(c.clone()));
            combos
        })
    }

    proptest! {
        #[test]
        fn names_are_unique_safe_and_stable(cells in any_cells()) {
            let names = cell_names(&cells);
            prop_assert_eq!(names.len(), cells.len());
            let distinct: HashSet<String> = names.iter().map(|n| n.to_ascii_lowercase()).collect();
            prop_assert_eq!(distinct.len(), names.len(), "unique, ignoring case: {:?}", names);
            for name in &names {
                prop_assert!(
                    name.chars().all(|c| c.is_ascii_alphanumeric() || "._+-~".contains(c)),
                    "only safe characters: {}", name
                );
                prop_assert!(!name.contains('=') && !name.contains('/'), "{}", name);
                prop_assert!(!name.starts_with(['.', '-', '~']), "{}", name);
                prop_assert!(name.len() <= MAX_LEN + 4, "{}", name);
            }
            prop_assert_eq!(&cell_names(&cells), &names, "the same cells, the same names");
        }

        #[test]
        fn a_name_does_not_depend_on_the_other_cells_unless_it_collides(
            cells in any_cells(),
        ) {
            let names = cell_names(&cells);
            for (cell, name) in cells.iter().zip(&names) {
                if !name.contains('~') {
                    prop_assert_eq!(&cell_names(std::slice::from_ref(cell))[0], name);
                }
            }
        }
    }
}
