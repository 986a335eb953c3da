//! What the watchers' objects become: recorded sequences of Nodes, EndpointSlices, Pods and
//! Events (as the API server sends them during topology-skew) turned into the timeline events
//! the local target writes, and the model check (`modelAgreement`) on those sequences, agreeing
//! where the controller did what kube-model does and disagreeing where a slice says otherwise.

use std::collections::BTreeMap;

use harness_core::measure::{EventKind, TerminationStage};
use harness_kind::agreement::AgreementLog;
use harness_kind::observer::{Change, Observer};
use k8s_openapi::api::core::v1::{Event, Node, Pod, Service};
use k8s_openapi::api::discovery::v1::EndpointSlice;
use serde_json::{Value, json};

const A: &str = "ap-northeast-2a";
const C: &str = "ap-northeast-2c";
const NS: &str = "harness-r";

fn node(name: &str, zone: Option<&str>, cpu: &str, ready: bool) -> Node {
    let mut labels = serde_json::Map::new();
    if let Some(zone) = zone {
        labels.insert("topology.kubernetes.io/zone".into(), json!(zone));
    } else {
        labels.insert("node-role.kubernetes.io/control-plane".into(), json!(""));
    }
    serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "Node",
        "metadata": { "name": name, "labels": labels },
        "status": {
            "allocatable": { "cpu": cpu },
            "conditions": [{ "type": "Ready", "status": if ready { "True" } else { "False" } }]
        }
    }))
    .unwrap()
}

/// (pod, node, zone, ready, hinted zones)
type Ep<'a> = (&'a str, &'a str, &'a str, bool, &'a [&'a str]);

fn slice(endpoints: &[Ep<'_>]) -> EndpointSlice {
    let endpoints: Vec<Value> = endpoints
        .iter()
        .enumerate()
        .map(|(i, (pod, node, zone, ready, hints))| {
            let mut e = json!({
                "addresses": [format!("10.244.0.{}", i + 10)],
                "conditions": { "ready": ready, "serving": ready, "terminating": false },
                "nodeName": node, "zone": zone,
                "targetRef": { "kind": "Pod", "name": pod, "namespace": NS }
            });
            if !hints.is_empty() {
                let zones: Vec<Value> = hints.iter().map(|z| json!({ "name": z })).collect();
                e["hints"] = json!({ "forZones": zones });
            }
            e
        })
        .collect();
    serde_json::from_value(json!({
        "apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
        "metadata": {
            "name": "flagsvc-x7k2p", "namespace": NS,
            "labels": { "kubernetes.io/service-name": "flagsvc" }
        },
        "addressType": "IPv4",
        "endpoints": endpoints,
        "ports": [{ "name": "http", "port": 8081, "protocol": "TCP" }]
    }))
    .unwrap()
}

fn pod(name: &str, node: Option<&str>, ready: bool, deleting: bool) -> Pod {
    let mut meta = json!({ "name": name, "namespace": NS });
    if deleting {
        meta["deletionTimestamp"] = json!("2026-12-01T12:00:00Z");
    }
    let mut spec = json!({ "containers": [{ "name": "flagsvc" }] });
    if let Some(node) = node {
        spec["nodeName"] = json!(node);
    }
    serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec,
        "status": { "conditions": [{ "type": "Ready", "status": if ready { "True" } else { "False" } }] }
    }))
    .unwrap()
}

fn event(uid: &str, reason: &str, message: &str) -> Event {
    serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "Event",
        "metadata": { "name": format!("flagsvc.{uid}"), "namespace": NS, "uid": uid },
        "involvedObject": { "kind": "Service", "name": "flagsvc", "namespace": NS },
        "reason": reason, "message": message, "type": "Normal", "count": 1
    }))
    .unwrap()
}

fn service() -> Service {
    serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "Service",
        "metadata": {
            "name": "flagsvc", "namespace": NS,
            "annotations": { "service.kubernetes.io/topology-mode": "Auto" }
        },
        "spec": { "type": "ClusterIP", "clusterIP": "10.96.12.34", "ports": [{ "port": 80 }] }
    }))
    .unwrap()
}

const W: [&str; 5] = [
    "k-worker",
    "k-worker2",
    "k-worker3",
    "k-worker4",
    "k-worker5",
];

fn cluster() -> Vec<Node> {
    vec![
        node("k-control-plane", None, "8", true),
        node(W[0], Some(A), "4", true),
        node(W[1], Some(A), "4", true),
        node(W[2], Some(C), "4", true),
        node(W[3], Some(C), "4", true),
    ]
}

/// The four pods in zone c; `hints`: the zones each is hinted for.
fn four_pods(hints: [&'static [&'static str]; 4]) -> EndpointSlice {
    slice(&[
        ("p0", W[2], C, true, hints[0]),
        ("p1", W[2], C, true, hints[1]),
        ("p2", W[3], C, true, hints[2]),
        ("p3", W[3], C, true, hints[3]),
    ])
}

const HINTED: [&[&str]; 4] = [&[A], &[A], &[C], &[C]];
const NONE: [&[&str]; 4] = [&[], &[], &[], &[]];

fn reach(events: &[EventKind], zone: &str) -> Option<Vec<String>> {
    events.iter().rev().find_map(|e| match e {
        EventKind::Reachability { zone: z, pods, .. } if z == zone => Some(pods.clone()),
        _ => None,
    })
}

#[test]
fn slices_become_hints_endpoints_and_reachability() {
    let mut obs = Observer::new(vec![A.into(), C.into()]);
    for n in cluster() {
        assert!(obs.apply(Change::Node(Box::new(n))).is_empty());
    }
    // Pods scheduled, not ready: pod events with their node's zone.
    let events = obs.apply(Change::Pod(Box::new(pod("p0", Some(W[2]), false, false))));
    assert_eq!(
        events,
        [EventKind::Pod {
            pod: "p0".into(),
            node: W[2].into(),
            zone: C.into(),
            created: true
        }]
    );
    // Seen again (ready now): no second pod event.
    assert!(
        obs.apply(Change::Pod(Box::new(pod("p0", Some(W[2]), true, false))))
            .is_empty()
    );

    let events = obs.apply(Change::Slice(Box::new(four_pods(HINTED))));
    let hints = events
        .iter()
        .find_map(|e| match e {
            EventKind::Hints { enabled, for_zones } => Some((*enabled, for_zones.clone())),
            _ => None,
        })
        .expect("a hints event");
    assert!(hints.0);
    assert_eq!(hints.1["p0"], [A.to_owned()]);
    assert_eq!(hints.1["p3"], [C.to_owned()]);
    let ready: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            EventKind::Endpoint { pod, ready: true } => Some(pod.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(ready, ["p0", "p1", "p2", "p3"]);
    // kube-proxy in 2a uses the two pods hinted for 2a: half the capacity.
    assert_eq!(reach(&events, A).unwrap(), ["p0", "p1"]);
    assert_eq!(reach(&events, C).unwrap(), ["p2", "p3"]);
    assert!(obs.hints_enabled());

    // The same slice again (a re-list): nothing new.
    assert!(
        obs.apply(Change::Slice(Box::new(four_pods(HINTED))))
            .is_empty()
    );

    // Hints removed: every pod reachable from both zones.
    let events = obs.apply(Change::Slice(Box::new(four_pods(NONE))));
    assert!(events.contains(&EventKind::Hints {
        enabled: false,
        for_zones: BTreeMap::new()
    }));
    assert_eq!(reach(&events, A).unwrap(), ["p0", "p1", "p2", "p3"]);
    assert!(!obs.hints_enabled());

    // A pod leaves the ready endpoints.
    let events = obs.apply(Change::Slice(Box::new(slice(&[
        ("p0", W[2], C, true, &[]),
        ("p1", W[2], C, true, &[]),
        ("p2", W[3], C, true, &[]),
        ("p3", W[3], C, false, &[]),
    ]))));
    assert!(events.contains(&EventKind::Endpoint {
        pod: "p3".into(),
        ready: false
    }));
    assert!(matches!(
        events.last(),
        Some(EventKind::Reachability { ready_pods: 3, .. })
    ));
}

#[test]
fn pods_are_numbered_in_creation_order_and_their_deletion_recorded() {
    let mut obs = Observer::new(vec![A.into()]);
    // The pod is seen before its node: its pod event waits for the node.
    assert!(
        obs.apply(Change::Pod(Box::new(pod("b", None, false, false))))
            .is_empty()
    );
    assert!(
        obs.apply(Change::Pod(Box::new(pod("b", Some(W[0]), false, false))))
            .is_empty()
    );
    assert!(
        obs.apply(Change::Pod(Box::new(pod("a", Some(W[0]), false, false))))
            .is_empty()
    );
    let events = obs.apply(Change::Node(Box::new(node(W[0], Some(A), "4", true))));
    assert_eq!(events.len(), 2, "{events:?}");
    let order: Vec<(&str, u32)> = obs
        .pods()
        .iter()
        .map(|p| (p.name.as_str(), p.index))
        .collect();
    assert_eq!(order, [("b", 0), ("a", 1)]);

    let events = obs.apply(Change::Pod(Box::new(pod("b", Some(W[0]), true, true))));
    assert_eq!(
        events,
        [EventKind::Termination {
            pod: "b".into(),
            stage: TerminationStage::Deleted
        }]
    );
    let events = obs.apply(Change::PodDeleted("b".into()));
    assert_eq!(
        events,
        [
            EventKind::Termination {
                pod: "b".into(),
                stage: TerminationStage::Exited
            },
            EventKind::Pod {
                pod: "b".into(),
                node: W[0].into(),
                zone: A.into(),
                created: false
            }
        ]
    );
    assert_eq!(obs.running_pods().len(), 1);
    assert_eq!(obs.pods().len(), 2, "gone pods stay in the run's record");
    // A late update of the gone pod changes nothing.
    assert!(
        obs.apply(Change::Pod(Box::new(pod("b", Some(W[0]), false, true))))
            .is_empty()
    );
}

#[test]
fn node_changes_during_the_run_are_noted_with_their_moment() {
    let mut obs = Observer::new(vec![A.into()]);
    // The first list: known nodes, nothing to note.
    for n in cluster() {
        assert!(obs.apply(Change::Node(Box::new(n))).is_empty());
    }
    assert!(obs.apply(Change::NodesListed).is_empty());
    let note = |events: Vec<EventKind>| match &events[..] {
        [EventKind::Note { message }] => message.clone(),
        other => panic!("{other:?}"),
    };
    // addNode: the spare registers, NotReady until its network runs, then Ready.
    let spare = |ready| Change::Node(Box::new(node(W[4], Some(A), "8", ready)));
    assert_eq!(
        note(obs.apply(spare(false))),
        "node k-worker5 registered (NotReady)"
    );
    assert_eq!(note(obs.apply(spare(true))), "node k-worker5 is Ready");
    assert!(
        obs.apply(spare(true)).is_empty(),
        "a status update changes nothing"
    );
    // setNodeReady: false, as the node controller records it.
    assert_eq!(
        note(obs.apply(Change::Node(Box::new(node(W[0], Some(A), "4", false))))),
        "node k-worker is NotReady"
    );
    assert_eq!(
        note(obs.apply(Change::NodeDeleted(W[4].into()))),
        "node k-worker5 deleted"
    );
    assert!(obs.apply(Change::NodeDeleted(W[4].into())).is_empty());
}

#[test]
fn events_are_recorded_once() {
    let mut obs = Observer::new(vec![A.into()]);
    let e = event(
        "u1",
        "TopologyAwareHintsDisabled",
        "Insufficient Node information: ... 4 endpoints, 2 zones",
    );
    let events = obs.apply(Change::Event(Box::new(e.clone())));
    assert!(matches!(
        &events[..],
        [EventKind::KubeEvent { reason, object, .. }]
            if reason == "TopologyAwareHintsDisabled" && object == "service/flagsvc"
    ));
    assert!(
        obs.apply(Change::Event(Box::new(e))).is_empty(),
        "a re-list repeats it"
    );
}

#[test]
fn the_model_agrees_with_the_controllers_recorded_decisions() {
    let mut obs = Observer::new(vec![A.into(), C.into()]);
    let mut log = AgreementLog::new(&service()).unwrap();
    for n in cluster() {
        obs.apply(Change::Node(Box::new(n)));
    }
    let step = |obs: &mut Observer, log: &mut AgreementLog, t: f64, change: Change| {
        let before = obs.hints_enabled();
        obs.apply(change);
        log.check(t, obs.nodes(), obs.slices(), before)
            .unwrap()
            .clone()
    };
    // 0.5 / 0.5: two endpoints hinted for each zone; the model says the same.
    let first = step(
        &mut obs,
        &mut log,
        1.0,
        Change::Slice(Box::new(four_pods(HINTED))),
    );
    assert!(first.agreed, "{first:?}");
    assert_eq!(
        first.model_per_zone,
        BTreeMap::from([(A.into(), 2), (C.into(), 2)])
    );
    assert_eq!(first.model_events, ["TopologyAwareHintsEnabled"]);
    assert_eq!(
        first.zone_cpu_ratios,
        Some(BTreeMap::from([(A.into(), 0.5), (C.into(), 0.5)]))
    );

    // A node of 8 CPU joins zone a: 2/3 : 1/3, the controller removes the hints.
    obs.apply(Change::Node(Box::new(node(W[4], Some(A), "8", true))));
    let removed = step(
        &mut obs,
        &mut log,
        13.0,
        Change::Slice(Box::new(four_pods(NONE))),
    );
    assert!(removed.agreed, "{removed:?}");
    assert!(!removed.model_hints && !removed.real_hints);
    assert_eq!(removed.model_events, ["TopologyAwareHintsDisabled"]);

    // A slice that kept its hints at 2/3 : 1/3 would not be what the model does.
    let wrong = step(
        &mut obs,
        &mut log,
        14.0,
        Change::Slice(Box::new(four_pods(HINTED))),
    );
    assert!(!wrong.agreed, "{wrong:?}");
    assert!(wrong.real_hints);

    let summary = log.summary(10.0);
    assert_eq!((summary.checks, summary.agreed), (3, 2));
    assert_eq!(summary.changes[0].t_s, -9.0);
}

fn deployment(
    generation: i64,
    observed: i64,
    updated: i32,
    replicas: i32,
    available: i32,
) -> Change {
    Change::Deployment(Box::new(
        serde_json::from_value(json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": { "name": "flagsvc", "namespace": NS, "generation": generation },
            "spec": { "replicas": 3, "selector": {}, "template": {} },
            "status": { "observedGeneration": observed, "updatedReplicas": updated,
                        "replicas": replicas, "availableReplicas": available }
        }))
        .unwrap(),
    ))
}

/// A rollout is complete when the controller's status says so for the patched generation:
/// not while the old status is still the observed one, not with surge pods or old replicas
/// left, not with updated replicas unavailable.
#[test]
fn a_rollout_completes_from_the_deployments_status() {
    use harness_core::measure::RolloutStage;
    use harness_kind::observer::PendingRollout;
    let mut o = Observer::new(vec![A.into()]);
    // Before the rollout: complete at generation 1, and nothing to record.
    assert!(o.apply(deployment(1, 1, 3, 3, 3)).is_empty());
    let started = o.start_rollout(PendingRollout {
        revision: 2,
        generation: 2,
    });
    assert_eq!(
        started,
        [EventKind::Rollout {
            revision: 2,
            stage: RolloutStage::Started
        }]
    );
    // The controller has not observed generation 2 yet; its status is the old complete one.
    assert!(o.apply(deployment(2, 1, 3, 3, 3)).is_empty());
    // Surge: 3 updated, 4 replicas (an old one terminating).
    assert!(o.apply(deployment(2, 2, 3, 4, 3)).is_empty());
    // All updated, one not yet available (minReadySeconds, probe).
    assert!(o.apply(deployment(2, 2, 3, 3, 2)).is_empty());
    assert_eq!(
        o.apply(deployment(2, 2, 3, 3, 3)),
        [EventKind::Rollout {
            revision: 2,
            stage: RolloutStage::Complete
        }]
    );
    assert_eq!(o.pending_rollout(), None);
    // Recorded once.
    assert!(o.apply(deployment(2, 2, 3, 3, 3)).is_empty());
}

/// The kubelet's `FailedPreStopHook` (an exec hook on a scratch image) is a Warning on the
/// timeline, with the pod it happened to.
#[test]
fn a_failed_prestop_hook_is_on_the_timeline() {
    let mut o = Observer::new(vec![A.into()]);
    let event: Event = serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "Event",
        "metadata": { "name": "flagsvc-old-0.1", "namespace": NS, "uid": "u1" },
        "involvedObject": { "kind": "Pod", "name": "flagsvc-old-0", "namespace": NS },
        "reason": "FailedPreStopHook", "type": "Warning", "count": 1,
        "message": "PreStopHook failed: rpc error: exec: \"sleep\": executable file not found in $PATH"
    }))
    .unwrap();
    let events = o.apply(Change::Event(Box::new(event)));
    assert_eq!(events.len(), 1);
    match &events[0] {
        EventKind::KubeEvent {
            kind,
            reason,
            object,
            message,
        } => {
            assert_eq!(*kind, kube_model::EventType::Warning);
            assert_eq!(reason, "FailedPreStopHook");
            assert_eq!(object, "pod/flagsvc-old-0");
            assert!(message.contains("executable file not found"), "{message}");
        }
        other => panic!("{other:?}"),
    }
}
