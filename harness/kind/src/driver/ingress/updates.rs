//! How many configuration updates a replica's controller applied, from its Prometheus metrics
//! (`GET /metrics` on the controller's `--healthz-addr`, default `:10254`, no authentication;
//! `pkg/controller/services/svchealthz.go`): the counter `haproxyingress_updates_total{status}`
//! (namespace `haproxyingress`), where `full` counts the updates that rewrote `haproxy.cfg` and
//! reloaded HAProxy, `dynamic` those applied through HAProxy's runtime API without a reload,
//! and `noop` those that changed nothing (haproxy-ingress pkg/controller/services/metrics.go,
//! `updatesCounter`: "Cumulative number of Ingress controller updates. Status can be noop,
//! dynamic, full."; pkg/haproxy/instance.go counts `full` in `Reload`, before HAProxy is asked
//! to reload — a reload that fails counts too — and `dynamic` when the updater sent
//! runtime-API commands).
//!
//! A `full` increment is the reload signal the observer uses: each replica's controller
//! reloads its own HAProxy, so the counter of that pod is the number of HAProxy reloads of that
//! replica (the first, at start, included). A counter going backwards means a new controller
//! process (a restarted container).

/// The controller's update counters at one scrape.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct UpdateCounts {
    /// Updates that reloaded HAProxy (`status="full"`).
    pub full: u64,
    /// Updates applied through the runtime API (`status="dynamic"`).
    pub dynamic: u64,
}

/// The metric's name (namespace `haproxyingress`, name `updates_total`).
pub const UPDATES_METRIC: &str = "haproxyingress_updates_total";

impl UpdateCounts {
    /// Reads the counters from Prometheus' text exposition format; `None` when the metric is
    /// absent (not an haproxy-ingress controller, or one that has not updated yet).
    pub fn parse(text: &str) -> Option<UpdateCounts> {
        let mut counts = UpdateCounts::default();
        let mut found = false;
        for line in text.lines() {
            let Some(rest) = line.strip_prefix(UPDATES_METRIC) else {
                continue;
            };
            let Some((labels, value)) = rest.strip_prefix('{').and_then(|r| r.split_once('}'))
            else {
                continue;
            };
            let Some(value) = value
                .split_whitespace()
                .next()
                .and_then(|v| v.parse::<f64>().ok())
            else {
                continue;
            };
            let status = labels.split(',').find_map(|kv| {
                let (k, v) = kv.split_once('=')?;
                (k.trim() == "status").then(|| v.trim().trim_matches('"'))
            });
            let value = value.max(0.0) as u64;
            match status {
                Some("full") => counts.full = value,
                Some("dynamic") => counts.dynamic = value,
                _ => {}
            }
            found = true;
        }
        found.then_some(counts)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_full_and_dynamic_counts_are_read() {
        let text = "# HELP haproxyingress_updates_total Cumulative number of Ingress controller updates.\n\
            # TYPE haproxyingress_updates_total counter\n\
            haproxyingress_updates_total{status=\"dynamic\"} 4\n\
            haproxyingress_updates_total{status=\"full\"} 7\n\
            haproxyingress_updates_total{status=\"noop\"} 12\n\
            haproxyingress_update_success 1\n";
        assert_eq!(
            UpdateCounts::parse(text),
            Some(UpdateCounts {
                full: 7,
                dynamic: 4
            })
        );
    }

    #[test]
    fn without_the_metric_there_are_no_counts() {
        assert_eq!(UpdateCounts::parse("go_goroutines 12\n"), None);
        assert_eq!(UpdateCounts::parse(""), None);
    }
}
