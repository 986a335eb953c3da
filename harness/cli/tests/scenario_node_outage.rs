//! A user's zone outage end to end on the local target (scenarios/testdata/valid-zone-outage.yaml):
//! both nodes of zone b turn NotReady, then Ready again. Before the fix the pods of a node
//! that came back stayed out of the endpoints to the end of the run ("pods ready 2/4",
//! `removals[].toS` null); now the returned kubelets probe them back in, b's callers are back on
//! b's pods, and the reachability at the end is the one before the outage.

mod support;

use serde_json::Value;
use support::run_testdata as run;

/// The last reachability event of each zone before `t_s`.
fn reachable_at(events: &[Value], zone: &str, t_s: f64) -> Vec<String> {
    events
        .iter()
        .rev()
        .filter(|e| e["event"] == "reachability" && e["zone"] == zone)
        .find(|e| e["tS"].as_f64().unwrap() <= t_s)
        .map(|e| {
            e["pods"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| p.as_str().unwrap().to_owned())
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn pods_of_a_zone_that_comes_back_return_to_the_endpoints() {
    let (code, s, events) = run("valid-zone-outage.yaml");
    assert_eq!(code, 0, "{}", s["explanation"]);
    let zone_b: Vec<String> = s["pods"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["zone"] == "b")
        .map(|p| p["name"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(zone_b.len(), 2, "{}", s["pods"]);
    let removals = s["removals"].as_array().unwrap();
    for pod in &zone_b {
        let removal = removals
            .iter()
            .find(|r| r["pod"] == pod.as_str())
            .unwrap_or_else(|| panic!("no removal of {pod}: {removals:?}"));
        assert_eq!(removal["cause"], "notReady", "{removal}");
        let back = removal["toS"]
            .as_f64()
            .unwrap_or_else(|| panic!("{pod} never came back: {removal}"));
        // The kubelets return at 8 s and probe within a period (1 s).
        assert!((8.0..=9.8).contains(&back), "{removal}");
    }
    let end = s["durationS"].as_f64().unwrap();
    let before = reachable_at(&events, "b", 3.9);
    assert_eq!(before, {
        let mut b = zone_b.clone();
        b.sort();
        b
    });
    assert_eq!(reachable_at(&events, "b", end), before);
    assert_eq!(
        reachable_at(&events, "a", end),
        reachable_at(&events, "a", 3.9)
    );
    // During the outage b's callers fail over to zone a's pods.
    assert_eq!(
        reachable_at(&events, "b", 6.0),
        reachable_at(&events, "a", 3.9)
    );
}
