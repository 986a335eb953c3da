//! `harness plan` on the shipped scenarios and the fixtures: structured JSON without Rust
//! debug text, rollouts timed by pod start-up, the warnings a reader needs before running.

use std::path::{Path, PathBuf};

use harness_core::plan::{Plan, PlanRate, plan};
use harness_core::scenario::load_scenario;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

fn planned(file: &str, variant: Option<&str>) -> Plan {
    let scenario = load_scenario(&root().join(file), variant).unwrap();
    plan(&scenario, 7).unwrap()
}

#[test]
fn json_is_structured_and_text_reads_as_words() {
    let p = planned("scenarios/topology-skew.yaml", Some("incident"));
    let json = serde_json::to_value(&p).unwrap();
    let g = &json["generators"][0];
    assert_eq!(g["rate"], serde_json::json!({ "perSecond": 100.0 }));
    assert_eq!(
        (g["connectionModel"].as_str(), g["via"].as_str()),
        (Some("perRequest"), Some("kubeProxy"))
    );
    assert_eq!(json["steps"][0]["pods"]["pod-0"]["zone"], "ap-northeast-2c");
    let all = json.to_string() + &p.to_text();
    for debug in [
        "PerSecond(",
        "KeepAlive",
        "PerRequest",
        "Some(",
        "\"(",
        "KubeProxy",
    ] {
        assert!(
            !all.contains(debug),
            "Rust debug text `{debug}` in the plan"
        );
    }
    assert!(p.to_text().contains(
        "load: ingress-2a in ap-northeast-2a: 100 rps, at most 256 connections (a new one per request), 38 SSE streams, through kube-proxy"
    ));
    assert_eq!(
        planned("scenarios/autoscaler-blind-spot.yaml", None).generators[0].rate,
        PlanRate::PerSecond(40.0)
    );
}

#[test]
fn a_rollout_is_timed_by_its_waves_of_pod_start_ups() {
    let p = planned("scenarios/testdata/valid-rollout-waves.yaml", None);
    assert_eq!(
        p.pod_ready_after_s, 2.0,
        "2 s start-up; the first probe passes at once"
    );
    let rollout = p.steps[1].rollout.as_ref().unwrap();
    // 3 new pods (maxSurge 2 + maxUnavailable 1), then 3 more once they are ready.
    assert_eq!((rollout.waves, rollout.duration_s), (2, 4.0));
    assert!(
        p.to_text()
            .contains("rollout: 2 waves of new pods, complete after about 4.0s")
    );
    let twelve = planned("scenarios/rollout-502.yaml", None);
    let r = twelve.steps[1].rollout.as_ref().unwrap();
    assert_eq!(
        (r.waves, r.duration_s),
        (4, 8.0),
        "12 pods, 3 at a time, none unavailable"
    );
}

#[test]
fn a_readiness_gate_makes_each_wave_wait_for_the_registration() {
    let p = planned("scenarios/testdata/valid-readiness-gate.yaml", None);
    // 2 s start-up, the first probe passes at once, then the 20 s registration lag and up to
    // one 5 s health-check interval.
    assert_eq!(p.pod_ready_after_s, 27.0);
    let rollout = p.steps[1].rollout.as_ref().unwrap();
    // 4 pods, maxSurge 1, maxUnavailable 0: one at a time.
    assert_eq!((rollout.waves, rollout.duration_s), (4, 108.0));
    let without = planned("scenarios/rollout-502.yaml", Some("slow-registration"));
    let gated = planned("scenarios/rollout-502.yaml", Some("readiness-gate"));
    let secs = |p: &Plan| p.steps[1].rollout.as_ref().unwrap().duration_s;
    assert_eq!((secs(&without), secs(&gated)), (8.0, 4.0 * 62.0));
}

#[test]
fn warns_of_pods_no_caller_reaches_and_of_a_pre_stop_shorter_than_the_lag() {
    let skew = planned("scenarios/topology-skew.yaml", Some("incident"));
    assert_eq!(
        skew.warnings,
        [
            "zone ap-northeast-2c has pods at load start but no generator calls from it: with topology-aware routing, the endpoints hinted for it (pod-2, pod-3) get no traffic"
        ]
    );
    assert!(
        planned("scenarios/topology-skew.yaml", Some("fixed"))
            .warnings
            .is_empty(),
        "routing off"
    );

    let incident = planned("scenarios/rollout-502.yaml", Some("incident"));
    assert!(incident.warnings.iter().any(|w| w.starts_with(
        "the pods stop serving as soon as they are deleted (no preStop hook, drainDelay 0s), but the load balancer goes on sending them requests for deregistrationLag 20s"
    )), "{:?}", incident.warnings);
    assert!(incident.warnings.iter().any(|w| w.starts_with(
        "alb-clients sends through the load balancer, not kube-proxy: the zones' reachability below does not apply to it"
    )));
    let fixed = planned("scenarios/rollout-502.yaml", Some("fixed"));
    assert!(
        !fixed
            .warnings
            .iter()
            .any(|w| w.contains("deregistrationLag")),
        "{:?}",
        fixed.warnings
    );
    let distroless = planned("scenarios/rollout-502.yaml", Some("distroless"));
    assert!(
        distroless.warnings.iter().any(|w| w.contains(
            "(an exec preStop hook that fails on an image without a shell, drainDelay 0s)"
        )),
        "{:?}",
        distroless.warnings
    );
    assert!(
        !planned("scenarios/rollout-502.yaml", Some("app-drain"))
            .warnings
            .iter()
            .any(|w| w.contains("deregistrationLag"))
    );
}

#[test]
fn a_kill_that_finds_no_pod_says_so_in_the_plan() {
    let text =
        std::fs::read_to_string(root().join("scenarios/testdata/valid-minimal.yaml")).unwrap();
    let scenario = harness_core::scenario::load_scenario_str(&text, "m.yaml", None).unwrap();
    let mut scenario = scenario;
    // A pick in a zone without pods: valid (the file cannot know), nothing to kill at run time.
    scenario
        .timeline
        .push(harness_core::scenario::TimelineEvent {
            at: std::time::Duration::from_secs(1),
            name: None,
            action: harness_core::scenario::Action::KillPickedPod {
                pick: harness_core::scenario::PodPick::Oldest,
                zone: Some("nowhere".into()),
            },
        });
    let p = plan(&scenario, 7).unwrap();
    let last = p.steps.last().unwrap();
    assert!(last.deleted.is_empty() && last.created.is_empty());
    assert!(
        last.events
            .iter()
            .any(|e| e
                .starts_with("note: `kill the oldest pod in nowhere` found no such running pod")),
        "{:?}",
        last.events
    );
}

/// A user's zone outage under PreferSameZone: before the fix the pods of a node that turned
/// Ready again stayed not ready to the end (and the plan predicted the same).
#[test]
fn a_zone_that_comes_back_is_reached_as_before_the_outage() {
    let p = planned("scenarios/testdata/valid-zone-outage.yaml", None);
    let deploy = &p.steps[0];
    let down = &p.steps[2];
    let back = p.steps.last().unwrap();
    assert_eq!(
        down.reachable_from["b"], deploy.reachable_from["a"],
        "b's callers fail over to zone a's pods"
    );
    assert_eq!(deploy.reachable_from["b"].len(), 2);
    assert_eq!(back.label, "node b-2 Ready=true");
    assert_eq!(back.reachable_from, deploy.reachable_from);
    assert_eq!(back.hints, deploy.hints);
    assert!(back.deleted.is_empty() && back.created.is_empty());
}

#[test]
fn a_node_not_ready_past_the_toleration_has_its_pods_evicted_and_recreated_elsewhere() {
    let p = planned("scenarios/testdata/valid-node-eviction.yaml", None);
    let labels: Vec<(Option<f64>, &str)> =
        p.steps.iter().map(|s| (s.at_s, s.label.as_str())).collect();
    assert_eq!(labels.len(), 4, "{labels:?}");
    let eviction = &p.steps[2];
    assert_eq!(eviction.at_s, Some(25.0), "5 s + the 20 s toleration");
    assert!(
        eviction.label.starts_with("taint-based eviction"),
        "{}",
        eviction.label
    );
    assert_eq!(eviction.deleted, ["pod-1"]);
    assert_eq!(eviction.created, ["pod-3"]);
    assert_ne!(
        eviction.pods["pod-3"].node, "n-2",
        "never on the tainted node"
    );
    assert!(
        eviction
            .events
            .iter()
            .any(|e| e.starts_with("TaintManagerEviction: Marking for deletion Pod")),
        "{:?}",
        eviction.events
    );
    assert_eq!(eviction.reachable_from["z"], ["pod-0", "pod-2", "pod-3"]);
    // The kubelet returns and terminates the evicted pod; nothing comes back under its name.
    let back = &p.steps[3];
    assert!(!back.pods.contains_key("pod-1"));
    assert_eq!(back.reachable_from["z"], ["pod-0", "pod-2", "pod-3"]);
}

#[test]
fn a_large_plan_is_summarised_per_zone_and_node_and_verbose_lists_every_pod() {
    let text = std::fs::read_to_string(root().join("scenarios/topology-skew.yaml"))
        .unwrap()
        .replace("replicas: 4", "replicas: 1000");
    let scenario = harness_core::scenario::load_scenario_str(&text, "big.yaml", None).unwrap();
    let p = plan(&scenario, 7).unwrap();
    let short = p.to_text();
    let verbose = p.to_verbose_text();
    // Every pod of every step in the verbose text; none listed one per line in the summary.
    let pod_lines = |t: &str| {
        t.lines()
            .filter(|l| l.trim_start().starts_with("pod-"))
            .count()
    };
    let pods_per_step: usize = p.steps.iter().map(|s| s.pods.len()).sum();
    assert_eq!(pod_lines(&verbose), pods_per_step);
    assert_eq!(pod_lines(&short), 0, "{short}");
    assert!(short.lines().count() * 10 < verbose.lines().count());
    // The summary counts what it does not name, and the counts add up to the step's pods.
    let deploy = &p.steps[0];
    assert!(
        short.contains("    1000 pods (harness plan --verbose lists each):"),
        "{short}"
    );
    let per_zone: usize = short
        .lines()
        .take_while(|l| !l.starts_with("at "))
        .filter_map(|l| l.trim().strip_prefix("ap-northeast-2"))
        .map(|l| {
            l.split(": ")
                .nth(1)
                .unwrap()
                .split(' ')
                .next()
                .unwrap()
                .parse::<usize>()
                .unwrap()
        })
        .sum();
    assert_eq!(per_zone, deploy.pods.len());
    assert!(short.contains("reach 1000 pod(s): pod-0, pod-1, pod-2, pod-3, pod-4, pod-5, pod-6, pod-7 … and 992 more")
        || short.contains("… and"), "{short}");
    // Repeated events once, with their count.
    assert!(short.contains("(×"), "{short}");
}
