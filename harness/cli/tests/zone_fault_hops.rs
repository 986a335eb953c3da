//! Zone faults on the hops the kube-proxy forwarders do not carry, end to end on the local
//! target (scenarios/testdata/zone-faults-*.yaml): the load balancer's connections to pods and
//! its callers' to it, and the ingress replicas' to pods and their callers' to them. A hop
//! within a zone is never touched; one across a faulted link is slowed or cut.

mod support;

use serde_json::Value;
use support::run_testdata;

/// The expectation called `name`.
fn named<'a>(s: &'a Value, name: &str) -> &'a Value {
    s["expectations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"] == name)
        .unwrap_or_else(|| panic!("no expectation `{name}`"))
}

fn observed(s: &Value, name: &str) -> f64 {
    named(s, name)["observed"]
        .as_f64()
        .unwrap_or_else(|| panic!("`{name}` observed nothing: {}", named(s, name)))
}

#[test]
fn the_load_balancer_pays_for_its_hops_across_zones_and_only_those() {
    let (code, s, _) = run_testdata("zone-faults-lb.yaml");
    assert_eq!(code, 1, "{:#}", s["explanation"]);
    // The balancer is in zone-a: its requests to zone-a's pods never cross the slowed link.
    let intact = observed(&s, "zone-a answers intact");
    assert!(intact < 0.04, "zone-a's p99 {intact} s");
    assert_eq!(named(&s, "zone-a answers intact")["passed"], true);
    // Those to zone-b's pods pay at least a round trip of 2 × 60 ms.
    let slowed = observed(&s, "zone-b answers slowed");
    assert!(slowed >= 0.12, "zone-b's p99 {slowed} s");
    // zone-b cut off: the balancer's requests to zone-b's pods (half of them) time out ...
    let a_cut = observed(&s, "a callers during the cut");
    assert!((0.3..0.7).contains(&a_cut), "zone-a's error rate {a_cut}");
    // ... and zone-b's callers cannot reach the balancer at all.
    let b_cut = observed(&s, "b callers during the cut");
    assert!(b_cut > 0.95, "zone-b's error rate {b_cut}");
    // Timeouts, as dropped packets make them: nothing is refused.
    assert_eq!(s["totals"]["transportErrors"]["connect_refused"], 0);
}

#[test]
fn the_ingress_replicas_pay_for_their_hops_across_zones() {
    let (code, s, _) = run_testdata("zone-faults-ingress.yaml");
    assert_eq!(code, 1, "{:#}", s["explanation"]);
    // Every path to a zone-b pod crosses the slowed link once.
    let slowed = observed(&s, "zone-b answers slowed");
    assert!(slowed >= 0.12, "zone-b's p99 {slowed} s");
    // Cut: only zone-a → ingress-0 (zone-a) → a zone-a pod answers, about a quarter.
    let cut = observed(&s, "a callers during the cut");
    assert!((0.5..0.95).contains(&cut), "zone-a's error rate {cut}");
    assert_eq!(s["totals"]["transportErrors"]["connect_refused"], 0);
}
