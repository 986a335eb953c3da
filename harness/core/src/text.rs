//! Small text helpers every layer shares: the natural order of pod names, numbers with
//! thousands separators, words quoted for a POSIX shell (commands a user can paste), and an
//! error with its chain of causes on one line.

/// `pod-10` sorts after `pod-9`: the name's stem, then its trailing number.
pub fn natural_key(name: &str) -> (&str, u64) {
    let stem = name.trim_end_matches(|c: char| c.is_ascii_digit());
    (stem, name[stem.len()..].parse().unwrap_or(0))
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
