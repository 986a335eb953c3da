//! The window bound syntax of expectations: `start`, `end`, a timeline entry name, any of those
//! followed by `+D` or `-D`, or a bare duration `D` (after load start); resolved to an offset
//! from load start.

use std::collections::BTreeMap;
use std::time::Duration;

use super::units::{format_duration, parse_duration};

/// What a bound is measured from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Anchor {
    Start,
    End,
    Event(String),
}

/// A parsed bound: an anchor and a signed offset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bound {
    pub anchor: Anchor,
    pub offset: Duration,
    pub negative: bool,
}

/// Parses a bound; `events` maps timeline entry names to their `at`.
pub fn parse_bound(text: &str, events: &BTreeMap<String, Duration>) -> Result<Bound, String> {
    let anchor_of = |name: &str| match name {
        "start" => Some(Anchor::Start),
        "end" => Some(Anchor::End),
        _ if events.contains_key(name) => Some(Anchor::Event(name.to_owned())),
        _ => None,
    };
    let plain = |anchor| Bound {
        anchor,
        offset: Duration::ZERO,
        negative: false,
    };
    if let Some(anchor) = anchor_of(text) {
        return Ok(plain(anchor));
    }
    let mut unknown_anchor = None;
    for (pos, sign) in text
        .char_indices()
        .rev()
        .filter(|(_, c)| *c == '+' || *c == '-')
    {
        let (name, offset) = (&text[..pos], &text[pos + 1..]);
        let Ok(offset) = humantime::parse_duration(offset) else {
            continue;
        };
        if name.is_empty() {
            continue;
        }
        match anchor_of(name) {
            Some(anchor) => {
                return Ok(Bound {
                    anchor,
                    offset,
                    negative: sign == '-',
                });
            }
            None if unknown_anchor.is_none() => unknown_anchor = Some(name),
            None => {}
        }
    }
    if let Ok(offset) = parse_duration(text) {
        return Ok(Bound {
            anchor: Anchor::Start,
            offset,
            negative: false,
        });
    }
    let named = if events.is_empty() {
        "the timeline has no named entries".to_owned()
    } else {
        format!(
            "named timeline entries are: {}",
            events.keys().cloned().collect::<Vec<_>>().join(", ")
        )
    };
    let looks_like_name = text.starts_with(|c: char| c.is_ascii_lowercase())
        && text
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
    Err(match unknown_anchor {
        Some(name) => format!("unknown timeline entry `{name}` in window bound `{text}`; {named}"),
        None if looks_like_name => format!("unknown timeline entry `{text}`; {named}"),
        None => format!(
            "invalid window bound `{text}`; expected start, end, a timeline entry name, one of those followed by +D or -D (\"node-change+5s\"), or a duration such as \"12s\"; {named}"
        ),
    })
}

impl Bound {
    /// The offset from load start, checked to lie within `0..=duration`.
    pub fn resolve(
        &self,
        text: &str,
        events: &BTreeMap<String, Duration>,
        duration: Duration,
    ) -> Result<Duration, String> {
        let base = match &self.anchor {
            Anchor::Start => Duration::ZERO,
            Anchor::End => duration,
            Anchor::Event(name) => events[name],
        };
        let at = if self.negative {
            base.checked_sub(self.offset)
                .ok_or_else(|| format!("window bound `{text}` falls before load start"))?
        } else {
            base + self.offset
        };
        if at > duration {
            return Err(format!(
                "window bound `{text}` ({}) falls after load end ({})",
                format_duration(at),
                format_duration(duration)
            ));
        }
        Ok(at)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events() -> BTreeMap<String, Duration> {
        [
            ("node-change".to_owned(), Duration::from_secs(20)),
            ("drain-2s".to_owned(), Duration::from_secs(5)),
        ]
        .into_iter()
        .collect()
    }

    fn resolve(text: &str) -> Result<Duration, String> {
        let events = events();
        parse_bound(text, &events)?.resolve(text, &events, Duration::from_secs(40))
    }

    #[test]
    fn every_form_resolves() {
        assert_eq!(resolve("start"), Ok(Duration::ZERO));
        assert_eq!(resolve("end"), Ok(Duration::from_secs(40)));
        assert_eq!(resolve("node-change"), Ok(Duration::from_secs(20)));
        assert_eq!(resolve("node-change+5s"), Ok(Duration::from_secs(25)));
        assert_eq!(resolve("node-change-2s"), Ok(Duration::from_secs(18)));
        assert_eq!(resolve("end-500ms"), Ok(Duration::from_millis(39_500)));
        assert_eq!(resolve("start+1s"), Ok(Duration::from_secs(1)));
        assert_eq!(resolve("12s"), Ok(Duration::from_secs(12)));
    }

    #[test]
    fn an_exact_name_wins_over_a_name_with_offset() {
        assert_eq!(resolve("drain-2s"), Ok(Duration::from_secs(5)));
    }

    #[test]
    fn out_of_range_bounds() {
        assert_eq!(
            resolve("start-1s"),
            Err("window bound `start-1s` falls before load start".into())
        );
        assert_eq!(
            resolve("end+1s"),
            Err("window bound `end+1s` (41s) falls after load end (40s)".into())
        );
    }

    #[test]
    fn unknown_names_list_the_named_entries() {
        assert_eq!(
            resolve("node-chnage+5s"),
            Err("unknown timeline entry `node-chnage` in window bound `node-chnage+5s`; named timeline entries are: drain-2s, node-change".into())
        );
        assert_eq!(
            resolve("later"),
            Err(
                "unknown timeline entry `later`; named timeline entries are: drain-2s, node-change"
                    .into()
            )
        );
        let err = resolve("+5s").unwrap_err();
        assert!(
            err.starts_with("invalid window bound `+5s`; expected start, end,"),
            "{err}"
        );
        let none = BTreeMap::new();
        let err = parse_bound("x+1s", &none).unwrap_err();
        assert!(
            err.ends_with("; the timeline has no named entries"),
            "{err}"
        );
    }
}
