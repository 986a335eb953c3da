//! "Did you mean …?": the closest known word to a misspelt field name or value, by
//! Levenshtein distance over characters (`strsim`).

use strsim::levenshtein as edit_distance;

/// The option closest to `word`, if it is close enough to be a likely misspelling: equal but
/// for case, or within an edit distance of 2 (1 for short words).
pub fn closest<'a>(word: &str, options: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let word_lower = word.to_lowercase();
    let limit = if word.chars().count() <= 4 { 1 } else { 2 };
    options
        .into_iter()
        .map(|option| (edit_distance(&word_lower, &option.to_lowercase()), option))
        .filter(|(distance, option)| *distance <= limit && *option != word)
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, option)| option)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distances() {
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("same", "same"), 0);
    }

    #[test]
    fn suggests_close_spellings_and_case_variants() {
        let fields = ["maxConcurrency", "queueSize", "queueTimeout"];
        assert_eq!(closest("maxConcurency", fields), Some("maxConcurrency"));
        assert_eq!(closest("queuesize", fields), Some("queueSize"));
        assert_eq!(closest("expectations", ["expect", "timeline"]), None);
        assert_eq!(closest("auto", ["Auto", "Disabled"]), Some("Auto"));
        assert_eq!(closest("zone", ["topology.kubernetes.io/zone"]), None);
    }
}
