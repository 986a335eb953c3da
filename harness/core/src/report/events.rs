//! The hint events as report.html and report.md list them: an event recorded several times in a
//! row at the same instant (the EndpointSlice controller records one per sync, and a sync may
//! repeat) is one row with a count, `TopologyAwareHintsDisabled ×3`. "The same instant" is the
//! instant as the reports print it (to a tenth of a second), so no two rows read the same.
//! Only the views collapse: summary.json and timeline.jsonl keep every event as recorded.

use super::HintEventSummary;

/// One row of the event list: an event and how many times in a row it was recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventRow<'a> {
    /// The instant as printed, `12.0s`.
    pub time: String,
    pub kind: &'a str,
    pub reason: &'a str,
    pub message: &'a str,
    pub times: usize,
}

impl EventRow<'_> {
    /// ` ×3` after a repeated event's reason; empty for one recorded once.
    pub fn repeat(&self) -> String {
        if self.times > 1 {
            format!(" ×{}", self.times)
        } else {
            String::new()
        }
    }
}

/// The instant as the reports print it.
pub fn time_text(t_s: f64) -> String {
    format!("{t_s:.1}s")
}

/// `events` in order, each run of identical consecutive events (same printed instant, type,
/// reason and message) as one row with its count.
pub fn event_rows<'a>(events: impl IntoIterator<Item = &'a HintEventSummary>) -> Vec<EventRow<'a>> {
    collapse(events.into_iter().map(|e| {
        (
            time_text(e.t_s),
            e.kind.as_str(),
            e.reason.as_str(),
            e.message.as_str(),
        )
    }))
    .into_iter()
    .map(|((time, kind, reason, message), times)| EventRow {
        time,
        kind,
        reason,
        message,
        times,
    })
    .collect()
}

/// Runs of equal consecutive items as (item, how many times in a row).
pub fn collapse<T: PartialEq>(items: impl IntoIterator<Item = T>) -> Vec<(T, usize)> {
    let mut out: Vec<(T, usize)> = Vec::new();
    for item in items {
        match out.last_mut() {
            Some((last, n)) if *last == item => *n += 1,
            _ => out.push((item, 1)),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn event(t_s: f64, reason: &str, message: &str) -> HintEventSummary {
        HintEventSummary {
            t_s,
            kind: "Warning".into(),
            reason: reason.into(),
            message: message.into(),
        }
    }

    /// The same TopologyAwareHintsDisabled event three times at 12.0 s (one at 12.04 s, which
    /// prints the same), then another event, then the first again later: three rows.
    #[test]
    fn identical_events_at_one_instant_are_one_row_with_a_count() {
        let disabled = "TopologyAwareHintsDisabled";
        let why = "Insufficient number of endpoints (0 endpoints, 2 zones)";
        let events = [
            event(12.0, disabled, why),
            event(12.0, disabled, why),
            event(12.04, disabled, why),
            event(12.0, "TopologyAwareHintsEnabled", "enabled"),
            event(30.0, disabled, why),
        ];
        let rows = event_rows(&events);
        let summary: Vec<(&str, &str, String)> = rows
            .iter()
            .map(|r| (r.time.as_str(), r.reason, r.repeat()))
            .collect();
        assert_eq!(
            summary,
            [
                ("12.0s", disabled, " ×3".to_string()),
                ("12.0s", "TopologyAwareHintsEnabled", String::new()),
                ("30.0s", disabled, String::new()),
            ]
        );
        assert_eq!(rows[0].message, why);
        assert_eq!(rows.iter().map(|r| r.times).sum::<usize>(), events.len());
        // A different message at the same instant is a different row.
        let two = [event(1.0, disabled, "a"), event(1.0, disabled, "b")];
        assert_eq!(event_rows(&two).len(), 2);
    }

    proptest! {
        /// Collapsing loses nothing: expanding each row `times` times gives the list back, no
        /// two neighbouring rows are equal, and every count is at least one.
        #[test]
        fn the_collapsed_list_expands_back_to_the_original(
            items in prop::collection::vec(0u8..3, 0..40)
        ) {
            let rows = collapse(items.iter().copied());
            let expanded: Vec<u8> = rows
                .iter()
                .flat_map(|(item, n)| std::iter::repeat_n(*item, *n))
                .collect();
            prop_assert_eq!(&expanded, &items);
            prop_assert!(rows.iter().all(|(_, n)| *n >= 1));
            prop_assert!(rows.windows(2).all(|w| w[0].0 != w[1].0));
        }

        /// The same for events: the rows, expanded, are the events as the reports print them.
        #[test]
        fn event_rows_expand_back_to_the_printed_events(
            picks in prop::collection::vec((0u8..3, 0u8..2, 0u8..2), 0..30)
        ) {
            let reasons = ["TopologyAwareHintsDisabled", "TopologyAwareHintsEnabled"];
            let events: Vec<HintEventSummary> = picks
                .iter()
                .map(|(t, r, m)| event(f64::from(*t) * 1.5, reasons[*r as usize], ["x", "y"][*m as usize]))
                .collect();
            let printed: Vec<(String, &str, &str)> = events
                .iter()
                .map(|e| (time_text(e.t_s), e.reason.as_str(), e.message.as_str()))
                .collect();
            let expanded: Vec<(String, &str, &str)> = event_rows(&events)
                .iter()
                .flat_map(|r| std::iter::repeat_n((r.time.clone(), r.reason, r.message), r.times))
                .collect();
            prop_assert_eq!(expanded, printed);
        }
    }
}
