//! Just enough of the Prometheus / OpenMetrics text format to read the workloads' own series:
//! `name{label="value",...} number` lines; comments and malformed lines are skipped.

/// One sample line.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample<'a> {
    pub name: &'a str,
    /// The text between the braces (empty without labels).
    pub labels: &'a str,
    pub value: f64,
}

impl<'a> Sample<'a> {
    /// The value of label `key`, if the sample has it.
    pub fn label(&self, key: &str) -> Option<&'a str> {
        let labels = self.labels;
        let mut rest = labels;
        while let Some(eq) = rest.find("=\"") {
            let name = rest[..eq].trim_start_matches([',', ' ']);
            let after = &rest[eq + 2..];
            let end = after.find('"')?;
            if name == key {
                return Some(&after[..end]);
            }
            rest = &after[end + 1..];
        }
        None
    }
}

/// Every sample in `text`, in order.
pub fn samples(text: &str) -> impl Iterator<Item = Sample<'_>> {
    text.lines().filter_map(|line| {
        let line = line.trim();
        if line.starts_with('#') {
            return None;
        }
        let (series, value) = line.rsplit_once(' ')?;
        let value = value.trim().parse::<f64>().ok()?;
        let (name, labels) = match series.split_once('{') {
            Some((name, rest)) => (name, rest.strip_suffix('}')?),
            None => (series, ""),
        };
        Some(Sample {
            name,
            labels,
            value,
        })
    })
}

/// The value of the unlabelled series `name` (a counter's `_total` included in `name`).
pub fn value(text: &str, name: &str) -> Option<f64> {
    samples(text)
        .find(|s| s.name == name && s.labels.is_empty())
        .map(|s| s.value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_names_labels_and_values() {
        let text = "# TYPE a counter\na_total 3\nb{reason=\"x\",code=\"200\"} 4.5\nbroken\n# EOF\n";
        let all: Vec<Sample> = samples(text).collect();
        assert_eq!(all.len(), 2);
        assert_eq!(all[1].label("reason"), Some("x"));
        assert_eq!(all[1].label("code"), Some("200"));
        assert_eq!(all[1].label("le"), None);
        assert_eq!(value(text, "a_total"), Some(3.0));
        assert_eq!(value(text, "b"), None, "labelled");
        assert_eq!(value(text, "a"), None);
    }
}
