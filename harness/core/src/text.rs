//! Small text helpers every layer shares: the natural order of pod names, numbers with
//! thousands separators, words quoted for a POSIX shell (commands a user can paste), and an
//! error with its chain of causes on one line.

/// `pod-10` sorts after `pod-9`: the name's stem, then its trailing number.
pub fn natural_key(name: &str) -> (&str, u64) {
    let stem = name.trim_end_matches(|c: char| c.is_ascii_digit());
    (stem, name[stem.len()..].parse().unwrap_or(0))
}

/// Names for a sentence: all of them when there are at most `shown + 1`, else the first
/// `shown` and a count of the rest: `pod-0, pod-1, pod-2 … and 940 more`. Where a full list is
/// wanted it is in summary.json or behind `--verbose`.
pub fn first_few<S: AsRef<str>>(names: &[S], shown: usize) -> String {
    if names.len() <= shown + 1 {
        return names
            .iter()
            .map(AsRef::as_ref)
            .collect::<Vec<_>>()
            .join(", ");
    }
    let head: Vec<&str> = names[..shown].iter().map(AsRef::as_ref).collect();
    format!("{} … and {} more", head.join(", "), names.len() - shown)
}

/// `1234567` → `"1,234,567"`.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Quotes `word` for a POSIX shell when it needs it: words made only of letters, digits and
/// `_-./:=@%+,` stay as they are (so `--set a.b=1` and `KEY=value` read naturally); anything
/// else goes in single quotes, each `'` inside written `'\''`. (The tests check every
/// quoting against `shlex`'s parser.)
pub fn shell_quote(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_-./:=@%+,".contains(&b));
    if plain {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// `error` and every source under it, joined with `: ` (what `{:#}` of anyhow prints).
pub fn error_chain(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut next = error.source();
    while let Some(e) = next {
        text.push_str(": ");
        text.push_str(&e.to_string());
        next = e.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_few_names_count_the_rest() {
        let names: Vec<String> = (0..1000).map(|i| format!("pod-{i}")).collect();
        assert_eq!(first_few(&names, 3), "pod-0, pod-1, pod-2 … and 997 more");
        assert_eq!(first_few(&names[..4], 3), "pod-0, pod-1, pod-2, pod-3");
        assert_eq!(first_few(&names[..0], 3), "");
        // Every name is either shown or counted.
        for n in 0..12 {
            let text = first_few(&names[..n], 5);
            let shown = text.split(" … ").next().unwrap();
            let shown = if shown.is_empty() {
                0
            } else {
                shown.split(", ").count()
            };
            let counted: usize = text
                .split(" and ")
                .nth(1)
                .map(|r| r.trim_end_matches(" more").parse().unwrap())
                .unwrap_or(0);
            assert_eq!(shown + counted, n, "{text}");
        }
    }

    #[test]
    fn pod_names_sort_by_their_number() {
        let mut names = vec!["pod-10", "pod-9", "pod-1", "lb", "pod-0"];
        names.sort_by_key(|n| natural_key(n));
        assert_eq!(names, ["lb", "pod-0", "pod-1", "pod-9", "pod-10"]);
    }

    #[test]
    fn thousands_are_separated() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(1_234_567), "1,234,567");
    }

    #[test]
    fn words_are_quoted_only_when_a_shell_would_change_them() {
        assert_eq!(
            shell_quote("kindest/node:v1@sha256:ab"),
            "kindest/node:v1@sha256:ab"
        );
        assert_eq!(shell_quote("load.duration=10s"), "load.duration=10s");
        assert_eq!(shell_quote(""), "''");
        assert_eq!(shell_quote("my skew.yaml"), "'my skew.yaml'");
        assert_eq!(shell_quote("$HOME"), "'$HOME'");
    }

    #[test]
    fn every_quoted_word_reads_back_as_itself() {
        for word in [
            "",
            "a b",
            "it's",
            "x'y\"z",
            "$(rm -rf /)",
            "tab\there",
            "ünï cödé",
            "a=b c",
        ] {
            let quoted = shell_quote(word);
            assert_eq!(
                shlex::split(&quoted),
                Some(vec![word.to_string()]),
                "{quoted}"
            );
        }
    }
}
