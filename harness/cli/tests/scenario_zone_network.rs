//! Network faults between zones end to end on the local target (scenarios/testdata/
//! valid-zone-network.yaml): callers in zone-a reach one pod per zone through kube-proxy; a
//! slowed link to zone-b costs no request; cutting zone-a off from every other zone times out
//! the requests kube-proxy sends across (none is refused) while zone-a's own pod keeps
//! answering; after the link heals, errors stop.

mod support;

use support::run_testdata as run;

#[test]
fn a_partition_times_out_cross_zone_requests_and_healing_ends_it() {
    let (code, s, _) = run("valid-zone-network.yaml");
    assert_eq!(code, 0, "{:#}", s["explanation"]);
    let transport = &s["totals"]["transportErrors"];
    assert_eq!(
        transport["connect_refused"], 0,
        "a partition refuses nothing: {transport}"
    );
    assert_eq!(transport["reset"], 0, "{transport}");
    assert!(transport["timeout"].as_u64().unwrap() > 0, "{transport}");
    let errors: Vec<f64> = s["series"]["errorRate"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    // Before the slowed link (0–1 s) and after healing (9 s on: healed at 8 s, plus the 1 s
    // request timeout): no error. While the link is slowed (2–4 s) only the 1 % loss can fail
    // a request: a lost SYN costs 1 s, the request's whole timeout.
    for (t, e) in errors.iter().enumerate() {
        if !(2..9).contains(&t) {
            assert_eq!(*e, 0.0, "second {t}: {errors:?}");
        } else if t < 5 {
            assert!(*e <= 0.1, "second {t}: {errors:?}");
        }
    }
    assert!(errors[5] > 0.3, "{errors:?}");
    // During the cut only zone-a's pod answers what was sent in second 5.
    for (pod, per_second) in s["series"]["requestsPerPod"].as_object().unwrap() {
        let during = per_second[5].as_u64().unwrap();
        if support::pod_zone(&s, pod) == "zone-a" {
            assert!(during > 0, "{pod} kept answering: {per_second}");
        } else {
            assert_eq!(during, 0, "{pod} is across the cut: {per_second}");
        }
    }
}
