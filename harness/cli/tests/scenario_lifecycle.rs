//! Pod lifecycles end to end on the local target, with the two small scenarios in
//! scenarios/testdata: a rollout of 6 pods with maxSurge 2 takes several waves, each a pod
//! start-up long (pods are not ready the moment they are created); and a pod whose node turns
//! NotReady leaves the endpoints yet keeps answering on the connections it already had, which
//! the explanation counts.

mod support;

use serde_json::Value;
use support::{expectation, run_testdata as run};

/// The rollout's pod changes (creations and deletions) from its start, grouped into waves:
/// changes less than half a start-up apart belong to one wave.
fn waves(events: &[Value], rollout_start: f64) -> Vec<Vec<f64>> {
    let mut created: Vec<f64> = events
        .iter()
        .filter(|e| e["event"] == "pod")
        .filter_map(|e| e["tS"].as_f64())
        .filter(|t| *t >= rollout_start)
        .collect();
    created.sort_by(f64::total_cmp);
    let mut waves: Vec<Vec<f64>> = Vec::new();
    for t in created {
        match waves.last_mut() {
            Some(wave) if t - wave[0] < 1.0 => wave.push(t),
            _ => waves.push(vec![t]),
        }
    }
    waves
}

#[test]
fn a_rollout_of_six_pods_with_max_surge_two_takes_several_waves() {
    let (code, s, events) = run("valid-rollout-waves.yaml");
    assert_eq!(code, 0, "{}", s["explanation"]);
    let started = events
        .iter()
        .find(|e| e["event"] == "rollout" && e["stage"] == "started")
        .and_then(|e| e["tS"].as_f64())
        .unwrap();
    let waves = waves(&events, started);
    // 8 pods at most (6 + 2), at least 5 available (6 − 1): 3 new pods and 1 old one gone,
    // then 3 new and 2 old, then the last 3 old ones.
    assert!(waves.len() >= 3, "one wave per start-up: {waves:?}");
    assert_eq!(
        waves.iter().map(Vec::len).sum::<usize>(),
        12,
        "6 created, 6 deleted: {waves:?}"
    );
    for pair in waves.windows(2) {
        // The next wave waits for the previous one's pods: 2 s of start-up (the default).
        let gap = pair[1][0] - pair[0][0];
        assert!(gap >= 1.9, "waves {:.2}s apart: {waves:?}", gap);
    }
    let duration = expectation(&s, "rolloutDuration")["observed"]
        .as_f64()
        .unwrap();
    assert!(
        duration >= 2.0 * (waves.len() as f64 - 1.0),
        "{duration}s for {} waves",
        waves.len()
    );
    let told = s["explanation"].to_string();
    assert!(told.contains("rollout of revision 1: "), "{told}");
}

#[test]
fn a_not_ready_pod_keeps_answering_its_connections_and_the_explanation_counts_them() {
    let (code, s, _) = run("valid-node-not-ready.yaml");
    assert_eq!(code, 0, "{}", s["explanation"]);
    let pod = s["pods"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["node"] == "n-2")
        .unwrap()["name"]
        .as_str()
        .unwrap()
        .to_owned();
    let removals = s["removals"].as_array().unwrap();
    let removal = removals
        .iter()
        .find(|r| r["pod"] == pod.as_str())
        .unwrap_or_else(|| panic!("no removal of {pod}: {removals:?}"));
    assert_eq!(removal["cause"], "notReady");
    assert_eq!(removal["countedAt"], "sidecar");
    let from = removal["fromS"].as_f64().unwrap();
    assert!((from - 4.0).abs() < 0.5, "{removal}");
    let reached = removal["reached"].as_u64().unwrap();
    let connections = removal["openConnections"].as_u64().unwrap();
    assert!(connections >= 1, "{removal}");
    // The callers' side agrees: what they got back from the pod in the seconds after.
    let answered: u64 = s["series"]["requestsPerPod"][pod.as_str()]
        .as_array()
        .unwrap()
        .iter()
        .skip(from.ceil() as usize)
        .map(|n| n.as_u64().unwrap())
        .sum();
    assert!(answered > 50, "the pod kept answering: {answered}");
    assert!(
        reached.abs_diff(answered) <= answered / 5 + 30,
        "sidecar {reached}, callers {answered}"
    );
    let sentence = format!(
        "{pod} left the endpoints at {from:.1}s (not ready) and {reached} more requests reached it \
         until the end of the run, on the {connections} connections kube-proxy had already given it"
    );
    let told: Vec<&str> = s["explanation"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(told.contains(&sentence.as_str()), "{sentence}\n{told:#?}");
}
