//! What still reached pods after they left the endpoints, for the summary and in words: "pod-2
//! left the endpoints at 10.0s (not ready) and 941 more requests reached it until 30.0s, on the
//! 32 connections kube-proxy had already given it; kube-proxy steers only new connections
//! away from a pod". The counting is [`crate::measure::removals`]'.

use crate::measure::{CountedAt, Removal, RemovalCause};
use crate::report::RemovalSummary;
use crate::text::thousands;

/// Removals told one by one; the rest share a sentence.
const TOLD: usize = 3;

/// The summary's rows.
pub fn removal_summaries(removals: &[Removal]) -> Vec<RemovalSummary> {
    removals
        .iter()
        .map(|r| RemovalSummary {
            pod: r.pod.clone(),
            cause: match r.cause {
                RemovalCause::NotReady => "notReady",
                RemovalCause::Deleted => "deleted",
            }
            .into(),
            from_s: r.from_s,
            to_s: r.to_s,
            reached: r.reached,
            counted_at: match r.counted_at {
                CountedAt::Sidecar => "sidecar",
                CountedAt::Responses => "responses",
            }
            .into(),
            open_connections: r.open_connections,
            load_balancer_sent: r.load_balancer.map(|l| l.sent),
            load_balancer_failed: r.load_balancer.map(|l| l.failed),
        })
        .collect()
}

/// Sentences for the removals that still got requests, the largest first.
pub fn removal_story(removals: &[Removal]) -> Vec<String> {
    let mut reached: Vec<&Removal> = removals.iter().filter(|r| r.reached > 0).collect();
    if reached.is_empty() {
        return Vec::new();
    }
    reached.sort_by_key(|r| std::cmp::Reverse(r.reached));
    let mut story: Vec<String> = reached.iter().take(TOLD).map(|r| sentence(r)).collect();
    let rest = &reached[TOLD.min(reached.len())..];
    if !rest.is_empty() {
        let total: u64 = rest.iter().map(|r| r.reached).sum();
        let listed: Vec<String> = rest
            .iter()
            .take(5)
            .map(|r| format!("{} {}", r.pod, thousands(r.reached)))
            .collect();
        let more = if rest.len() > 5 {
            format!(", {} more", rest.len() - 5)
        } else {
            String::new()
        };
        story.push(format!(
            "{} more removals from the endpoints were followed by {} requests in all ({}{more})",
            rest.len(),
            thousands(total),
            listed.join(", ")
        ));
    }
    if reached.iter().any(|r| r.open_connections.unwrap_or(0) > 0) {
        story.push(
            "kube-proxy steers only new connections away from a pod that leaves the endpoints: \
             connections it already had keep it as their backend for as long as both ends live"
                .into(),
        );
    }
    story
}

fn sentence(r: &Removal) -> String {
    let why = match r.cause {
        RemovalCause::NotReady => "not ready",
        RemovalCause::Deleted => "deleted",
    };
    let one = r.reached == 1;
    let verb = match (r.counted_at, one) {
        (CountedAt::Sidecar, _) => "reached it",
        (CountedAt::Responses, true) => "was answered by it",
        (CountedAt::Responses, false) => "were answered by it",
    };
    let until = match (r.to_s, r.cause) {
        (Some(t), RemovalCause::NotReady) => format!("until it was ready again at {t:.1}s"),
        (Some(t), RemovalCause::Deleted) => format!("until it was gone at {t:.1}s"),
        (None, _) => "until the end of the run".into(),
    };
    let requests = if one { "request" } else { "requests" };
    let mut line = format!(
        "{} left the endpoints at {:.1}s ({why}) and {} more {requests} {verb} {until}",
        r.pod,
        r.from_s,
        thousands(r.reached)
    );
    match r.open_connections {
        Some(1) => line.push_str(", on the connection kube-proxy had already given it"),
        Some(n) if n > 1 => line.push_str(&format!(
            ", on the {} connections kube-proxy had already given it",
            thousands(n)
        )),
        _ => {}
    }
    if let Some(lb) = r.load_balancer.filter(|l| l.sent > 0) {
        line.push_str(&format!(
            "; meanwhile the load balancer, which had not deregistered it yet, sent it {} \
             requests ({} failed)",
            thousands(lb.sent),
            thousands(lb.failed)
        ));
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    fn removal(pod: &str, reached: u64, open: Option<u64>) -> Removal {
        Removal {
            pod: pod.into(),
            cause: RemovalCause::NotReady,
            from_s: 10.0,
            to_s: Some(30.0),
            reached,
            counted_at: CountedAt::Sidecar,
            open_connections: open,
            load_balancer: None,
        }
    }

    #[test]
    fn names_the_pod_the_time_the_requests_and_the_connections() {
        let story = removal_story(&[removal("pod-2", 941, Some(32)), removal("pod-3", 0, None)]);
        assert_eq!(
            story[0],
            "pod-2 left the endpoints at 10.0s (not ready) and 941 more requests reached it until \
             it was ready again at 30.0s, on the 32 connections kube-proxy had already given it"
        );
        assert_eq!(
            story.len(),
            2,
            "pod-3 got nothing: no sentence; then the why"
        );
        assert!(story[1].starts_with("kube-proxy steers only new connections"));
        assert!(removal_story(&[removal("pod-3", 0, None)]).is_empty());
    }

    #[test]
    fn a_deleted_pod_behind_a_load_balancer_counts_answers_and_what_the_lb_sent() {
        let r = Removal {
            cause: RemovalCause::Deleted,
            to_s: Some(3.7),
            counted_at: CountedAt::Responses,
            load_balancer: Some(crate::measure::LbSent { sent: 8, failed: 6 }),
            ..removal("pod-1", 1, None)
        };
        assert_eq!(
            removal_story(&[r]),
            [
                "pod-1 left the endpoints at 10.0s (deleted) and 1 more request was answered by it \
              until it was gone at 3.7s; meanwhile the load balancer, which had not deregistered \
              it yet, sent it 8 requests (6 failed)"
            ]
        );
    }

    #[test]
    fn many_removals_share_a_sentence_after_the_largest() {
        let many: Vec<Removal> = (0..6)
            .map(|i| removal(&format!("pod-{i}"), 100 + i as u64, None))
            .collect();
        let story = removal_story(&many);
        assert!(story[0].starts_with("pod-5 left"), "{story:?}");
        assert_eq!(
            story[3],
            "3 more removals from the endpoints were followed by 303 requests in all (pod-2 102, \
             pod-1 101, pod-0 100)"
        );
    }
}
