//! Zone faults on the hops the kube-proxy forwarders do not carry, end to end on the local
//! target (scenarios/testdata/zone-faults-*.yaml): the load balancer's connections to pods and
//! its callers' to it, and the ingress replicas' to pods and their callers' to them. A hop
//! within a zone is never touched; one across a faulted link is slowed or cut.

mod support;

use serde_json::Value;
use support::{expectation_named as named, run_testdata};

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
    // Every caller went through the balancer: crossZone says so, and it is the whole matrix.
    let c = &s["crossZone"];
    assert_eq!(
        c["proxied"]["generators"],
        serde_json::json!(["from-a", "from-b"])
    );
    let matrix = c["attributedRequests"].as_u64().unwrap() + c["unzonedRequests"].as_u64().unwrap();
    assert_eq!(c["proxied"]["requests"].as_u64().unwrap(), matrix, "{c}");
    assert_eq!(s["audit"]["held"], true);
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

/// The plan of `scenarios/testdata/<file>` as JSON.
fn plan(file: &str) -> Value {
    let out = support::harness(&[
        "plan",
        &format!("scenarios/testdata/{file}"),
        "--output",
        "json",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The step labelled `name: ...`: its events and the pods of `zone`, in natural order.
fn step(plan: &Value, name: &str, zone: &str) -> (Vec<String>, String) {
    let step = plan["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| {
            s["label"]
                .as_str()
                .unwrap()
                .starts_with(&format!("{name}:"))
        })
        .unwrap_or_else(|| panic!("no step {name}"));
    let events = step["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e.as_str().unwrap().to_owned())
        .collect();
    let mut pods: Vec<&str> = step["pods"]
        .as_object()
        .unwrap()
        .iter()
        .filter(|(_, p)| p["zone"] == zone)
        .map(|(name, _)| name.as_str())
        .collect();
    pods.sort_by_key(|p| p[4..].parse::<u32>().unwrap());
    (events, pods.join(", "))
}

#[test]
fn the_plan_names_each_hop_a_fault_slows_or_cuts() {
    let lb = plan("zone-faults-lb.yaml");
    let (events, zone_b) = step(&lb, "slow", "zone-b");
    assert_eq!(
        events,
        [
            format!(
                "network zone-a ↔ zone-b +60ms each way: the load balancer (in zone-a) reaches across it: {zone_b}"
            ),
            "network zone-a ↔ zone-b +60ms each way: callers in zone-b reach the load balancer (in zone-a) across it".to_owned(),
        ]
    );
    let (events, zone_b) = step(&lb, "cut", "zone-b");
    assert_eq!(
        events,
        [
            format!(
                "network zone-a ↔ zone-b partitioned: the load balancer (in zone-a) cannot reach, its requests time out: {zone_b}"
            ),
            "network zone-a ↔ zone-b partitioned: callers in zone-b cannot reach the load balancer (in zone-a), their requests time out".to_owned(),
        ]
    );

    let ingress = plan("zone-faults-ingress.yaml");
    let (events, zone_b) = step(&ingress, "slow", "zone-b");
    let (_, zone_a) = step(&ingress, "slow", "zone-a");
    assert_eq!(
        events,
        [
            format!(
                "network zone-a ↔ zone-b +60ms each way: ingress-0 (in zone-a) reaches across it: {zone_b}"
            ),
            format!(
                "network zone-a ↔ zone-b +60ms each way: ingress-1 (in zone-b) reaches across it: {zone_a}"
            ),
            "network zone-a ↔ zone-b +60ms each way: callers in zone-a reach ingress-1 (in zone-b) across it".to_owned(),
        ]
    );
}
