//! `zoneNetwork` on kind through the engine, against the scripted API server (its Nodes with pod
//! CIDRs) and recording fakes of `kind` and `docker` (`docker inspect` answering the worker
//! containers' addresses): the exact `docker exec NODE tc ...` commands at a fault, at its
//! `clear` and at teardown, node by node; the faults removed at teardown when a `tc` command
//! fails (the run fails, naming the command) and when the run is interrupted; and the refusal
//! in an existing cluster, naming the flag, before anything runs.

mod support;

use std::collections::BTreeMap;
use std::sync::Mutex;

use harness_core::clock::TimeScale;
use harness_core::engine::{self, RunOptions, RunOutcome};
use harness_core::measure::EventKind;
use harness_core::scenario::Scenario;
use harness_core::scenario::load_scenario_str;
use harness_kind::driver::{ClusterMode, KindTarget};
use serde_json::{Value, json};
use support::api_server::{ApiServer, Reply, Seen, list};
use support::fake_cluster::{CLUSTER, handler};
use support::fakes::FakeTools;
use support::files::IMAGES;
use support::kind_run::{options, run_context};
use tokio_util::sync::CancellationToken;

/// topology-skew's cluster (so the scripted API server's objects fit): a control plane in
/// ap-northeast-2a, two workers in each of ap-northeast-2a and ap-northeast-2c; its service and
/// generator, shortened; then `timeline`.
fn scenario(timeline: &str) -> Scenario {
    let yaml = format!(
        r#"
apiVersion: harness/v1alpha1
kind: Scenario
metadata: {{ name: topology-skew }}
cluster:
  controlPlane:
    - {{ name: cp-1, zone: ap-northeast-2a, allocatableCpu: "2" }}
  zones:
    - name: ap-northeast-2a
      nodes: [{{ name: a-1, allocatableCpu: "4" }}, {{ name: a-2, allocatableCpu: "4" }}]
    - name: ap-northeast-2c
      nodes: [{{ name: c-1, allocatableCpu: "4" }}, {{ name: c-2, allocatableCpu: "4" }}]
service:
  name: flagsvc
  replicas: 4
  placement: {{ zones: [ap-northeast-2c] }}
  sidecar: {{ maxConcurrency: 20 }}
  serviceTime: {{ fixed: 50ms }}
  readinessProbe: {{ period: 1s }}
load:
  warmup: 1s
  duration: 4s
  generators:
    - {{ name: ingress-2a, zone: ap-northeast-2a, rate: 100, path: /flags/checkout }}
timeline:
{timeline}expect:
  - {{ metric: errorRate, max: 1 }}
"#
    );
    load_scenario_str(&yaml, "zone-network.yaml", None).unwrap()
}

const SLOW_HEALED_CUT: &str = "  - { at: 1s, name: slow, zoneNetwork: { from: ap-northeast-2a, to: ap-northeast-2c, delay: 20ms, jitter: 2ms, loss: 0.01 } }
  - { at: 2s, name: healed, zoneNetwork: { from: ap-northeast-2c, to: ap-northeast-2a, clear: true } }
  - { at: 3s, name: cut, zoneNetwork: { from: ap-northeast-2a, to: all, partition: true } }
";

/// The fake cluster's Node `name` with a pod CIDR (as the node IPAM controller assigns them).
fn node(name: &str, zone: Option<&str>, pod_cidr: &str) -> Value {
    let mut node = support::fake_cluster::node(name, zone, "4");
    node["spec"] = json!({ "podCIDR": pod_cidr, "podCIDRs": [pod_cidr] });
    node
}

/// The fake cluster, its Nodes with pod CIDRs `10.244.<i>.0/24`.
fn with_pod_cidrs(seen: &Seen) -> Reply {
    if seen.method == "GET" && seen.path() == "/api/v1/nodes" && !seen.is_watch() {
        let worker = |suffix: &str, zone: &str, i: u8| {
            node(
                &format!("{CLUSTER}-{suffix}"),
                Some(zone),
                &format!("10.244.{i}.0/24"),
            )
        };
        return list(
            "NodeList",
            "v1",
            vec![
                node(&format!("{CLUSTER}-control-plane"), None, "10.244.0.0/24"),
                worker("worker", "ap-northeast-2a", 1),
                worker("worker2", "ap-northeast-2a", 2),
                worker("worker3", "ap-northeast-2c", 3),
                worker("worker4", "ap-northeast-2c", 4),
            ],
        );
    }
    handler(seen)
}

/// The worker containers' addresses as `docker inspect --format ...` prints them.
const INSPECTED: &str = "/harness-topology-skew-worker 172.18.0.3\n/harness-topology-skew-worker2 172.18.0.4\n/harness-topology-skew-worker3 172.18.0.5\n/harness-topology-skew-worker4 172.18.0.6\n";

fn fakes() -> FakeTools {
    let mut fakes = FakeTools::kind_and_docker(&[]);
    fakes.respond("docker inspect", INSPECTED, "", 0);
    fakes
}

/// Progress that keeps the notes and presses Ctrl-C at the first note containing `cancel_at`.
struct Notes {
    notes: Mutex<Vec<String>>,
    cancel_at: Option<(String, CancellationToken)>,
}

impl Notes {
    fn new(cancel_at: Option<(&str, CancellationToken)>) -> Notes {
        Notes {
            notes: Mutex::default(),
            cancel_at: cancel_at.map(|(s, c)| (s.to_owned(), c)),
        }
    }
}

impl engine::Progress for Notes {
    fn phase(&self, _: &str) {}
    fn tick(&self, _: f64, _: f64, _: &engine::Observation) {}
    fn note(&self, message: &str) {
        if let Some((at, cancel)) = &self.cancel_at
            && message.contains(at.as_str())
        {
            cancel.cancel();
        }
        self.notes.lock().unwrap().push(message.to_owned());
    }
}

async fn run(
    fakes: &FakeTools,
    server: &ApiServer,
    scenario: &Scenario,
    out: &std::path::Path,
    progress: &Notes,
    cancel: CancellationToken,
) -> RunOutcome {
    let options = options(fakes, ClusterMode::Create, out.join("kubeconfig"), IMAGES);
    let mut target = KindTarget::with_client(options, server.client());
    engine::run(
        &mut target,
        scenario,
        &run_context(out, TimeScale::REAL),
        &RunOptions { keep: false },
        cancel,
        progress,
    )
    .await
    .unwrap()
}

fn is_tc(call: &[String]) -> bool {
    call.len() > 3 && call[..2] == ["docker", "exec"] && call[3] == "tc"
}

/// The `tc` calls from `calls`, cut into consecutive blocks of `sizes`, each as node → its
/// commands (`tc ...`) in order. The nodes of a block run at once, so only each node's order
/// is fixed.
fn blocks(calls: &[Vec<String>], sizes: &[usize]) -> Vec<BTreeMap<String, Vec<String>>> {
    let tc: Vec<&Vec<String>> = calls.iter().filter(|c| is_tc(c)).collect();
    assert_eq!(tc.len(), sizes.iter().sum::<usize>(), "{tc:#?}");
    let mut out = Vec::new();
    let mut rest = &tc[..];
    for size in sizes {
        let (block, after) = rest.split_at(*size);
        let mut by_node: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for call in block {
            by_node
                .entry(call[2].clone())
                .or_default()
                .push(call[3..].join(" "));
        }
        out.push(by_node);
        rest = after;
    }
    out
}

const ROOT: &str =
    "tc qdisc add dev eth0 root handle 1: prio bands 5 priomap 1 2 2 2 1 2 0 0 1 1 1 1 1 1 1 1";
const WORKERS: [&str; 4] = ["worker", "worker2", "worker3", "worker4"];

/// What a fault `netem` (its arguments after `netem limit 10000`) between the two zones writes
/// in each worker: zone 2a's nodes (band 1:5 for 2c, the second zone) filter 2c's addresses,
/// 2c's nodes (band 1:4) 2a's.
fn fault(netem: &str) -> BTreeMap<String, Vec<String>> {
    let side = |band: u8, peers: [(u8, u8); 2]| {
        let mut commands = vec![
            ROOT.to_owned(),
            format!(
                "tc qdisc add dev eth0 parent 1:{band} handle {band}0: netem limit 10000 {netem}"
            ),
        ];
        for (ip, pods) in peers {
            for range in [format!("172.18.0.{ip}/32"), format!("10.244.{pods}.0/24")] {
                commands.push(format!(
                    "tc filter add dev eth0 parent 1: protocol ip prio {band} u32 match ip dst {range} flowid 1:{band}"
                ));
            }
        }
        commands
    };
    let to_2c = side(5, [(5, 3), (6, 4)]);
    let to_2a = side(4, [(3, 1), (4, 2)]);
    WORKERS
        .iter()
        .zip([&to_2c, &to_2c, &to_2a, &to_2a])
        .map(|(w, commands)| (format!("{CLUSTER}-{w}"), commands.clone()))
        .collect()
}

/// `tc qdisc del dev eth0 root` in every worker.
fn root_removed() -> BTreeMap<String, Vec<String>> {
    WORKERS
        .iter()
        .map(|w| {
            (
                format!("{CLUSTER}-{w}"),
                vec!["tc qdisc del dev eth0 root".to_owned()],
            )
        })
        .collect()
}

fn words(s: &str) -> Vec<String> {
    s.split(' ').map(str::to_owned).collect()
}

fn notes(outcome: &RunOutcome) -> Vec<String> {
    outcome
        .data
        .events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::Note { message } if message.contains(": tc in ") => Some(message.clone()),
            _ => None,
        })
        .collect()
}

/// A delay, its clear and a partition left in place: the commands of each, node by node, and
/// the partition's removal at teardown before the cluster is deleted. The control plane (in
/// zone 2a by the scenario) takes no part; the addresses are read once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn faults_are_tc_commands_in_the_workers_and_teardown_removes_them() {
    let server = ApiServer::start(with_pod_cidrs).await;
    let fakes = fakes();
    let out = tempfile::tempdir().unwrap();
    let progress = Notes::new(None);
    let outcome = run(
        &fakes,
        &server,
        &scenario(SLOW_HEALED_CUT),
        out.path(),
        &progress,
        CancellationToken::new(),
    )
    .await;
    assert!(outcome.error.is_none(), "{:?}", outcome.error);
    let teardown_failed: Vec<String> = progress
        .notes
        .lock()
        .unwrap()
        .iter()
        .filter(|n| n.contains("teardown failed"))
        .cloned()
        .collect();
    assert!(teardown_failed.is_empty(), "{teardown_failed:?}");

    let calls = fakes.calls();
    // Everything but tc, in order: the tools, the cluster, the addresses once, the deletion.
    let others: Vec<&Vec<String>> = calls.iter().filter(|c| !is_tc(c)).collect();
    let inspect: Vec<String> = [
        "docker",
        "inspect",
        "--format",
        "{{.Name}}{{range .NetworkSettings.Networks}} {{.IPAddress}}{{end}}",
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .chain(WORKERS.iter().map(|w| format!("{CLUSTER}-{w}")))
    .collect();
    assert_eq!(
        others[1..3],
        [&words("kind version"), &words("kind get clusters")]
    );
    assert_eq!(others[3][..3], ["kind", "create", "cluster"]);
    assert_eq!(others[4][..3], ["kind", "load", "docker-image"]);
    assert_eq!(others[5], &inspect);
    assert_eq!(others[6][..3], ["kind", "delete", "cluster"]);
    assert_eq!(others.len(), 7, "{others:#?}");
    let first_tc = calls.iter().position(|c| is_tc(c)).unwrap();
    let last_tc = calls.iter().rposition(|c| is_tc(c)).unwrap();
    assert!(calls[first_tc - 1] == inspect && calls[last_tc + 1][1] == "delete");

    let blocks = blocks(&calls, &[24, 4, 24, 4]);
    assert_eq!(blocks[0], fault("delay 20ms 2ms loss 1%"), "slow");
    assert_eq!(blocks[1], root_removed(), "healed");
    assert_eq!(blocks[2], fault("loss 100%"), "cut");
    assert_eq!(blocks[3], root_removed(), "teardown");

    let workers = "harness-topology-skew-worker, harness-topology-skew-worker2, harness-topology-skew-worker3, harness-topology-skew-worker4";
    assert_eq!(
        notes(&outcome),
        [
            format!(
                "network between ap-northeast-2a and ap-northeast-2c: +20ms each way ±2ms, 1% loss: tc in {workers}"
            ),
            format!(
                "network between ap-northeast-2c and ap-northeast-2a restored: tc in {workers}"
            ),
            format!(
                "network between ap-northeast-2a and every other zone: partitioned: tc in {workers}"
            ),
        ]
    );
}

/// A `tc` command that fails (here a filter in worker3): the run fails naming the command, and
/// teardown removes the root qdisc from every worker — worker3's too — taking "nothing there"
/// (worker's answer) for success.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_tc_command_fails_the_run_and_teardown_still_removes_the_faults() {
    let server = ApiServer::start(with_pod_cidrs).await;
    let mut fakes = fakes();
    fakes
        .respond(
            &format!("docker exec {CLUSTER}-worker3 tc filter add"),
            "",
            "Error: Parent Qdisc doesn't exists.\nWe have an error talking to the kernel\n",
            2,
        )
        .respond(
            &format!("docker exec {CLUSTER}-worker tc qdisc del dev eth0 root"),
            "",
            "Error: Cannot delete qdisc with handle of zero.\n",
            2,
        );
    let out = tempfile::tempdir().unwrap();
    let progress = Notes::new(None);
    let outcome = run(
        &fakes,
        &server,
        &scenario(SLOW_HEALED_CUT),
        out.path(),
        &progress,
        CancellationToken::new(),
    )
    .await;
    let error = harness_core::text::error_chain(outcome.error.as_ref().expect("a failed run"));
    assert!(
        error.contains("applying `slow: network between")
            && error.contains(&format!(
                "docker exec {CLUSTER}-worker3 tc filter add dev eth0 parent 1: protocol ip prio 4 u32 match ip dst 172.18.0.3/32 flowid 1:4"
            ))
            && error.contains("Parent Qdisc doesn't exists"),
        "{error}"
    );
    assert!(outcome.summary.partial);
    let notes = progress.notes.lock().unwrap().clone();
    assert!(
        !notes.iter().any(|n| n.contains("teardown failed")),
        "{notes:?}"
    );

    let calls = fakes.calls();
    // worker3 stopped at its first filter; the others ran theirs.
    let blocks = blocks(&calls, &[21, 4]);
    let mut expected = fault("delay 20ms 2ms loss 1%");
    expected
        .get_mut(&format!("{CLUSTER}-worker3"))
        .unwrap()
        .truncate(3);
    assert_eq!(blocks[0], expected);
    assert_eq!(blocks[1], root_removed(), "teardown");
    assert_eq!(calls.last().unwrap()[..3], ["kind", "delete", "cluster"]);
}

/// A kernel without `prio`/`netem` (as this project's build machines have): the run fails
/// saying what the kernel lacks and how to load it, naming the command; teardown removes what
/// may be there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kernel_without_netem_is_named() {
    let server = ApiServer::start(with_pod_cidrs).await;
    let mut fakes = fakes();
    fakes.respond(
        &format!("docker exec {CLUSTER}-worker tc qdisc add dev eth0 root"),
        "",
        "Error: Specified qdisc kind is unknown.\n",
        2,
    );
    let out = tempfile::tempdir().unwrap();
    let outcome = run(
        &fakes,
        &server,
        &scenario(SLOW_HEALED_CUT),
        out.path(),
        &Notes::new(None),
        CancellationToken::new(),
    )
    .await;
    let error = harness_core::text::error_chain(outcome.error.as_ref().expect("a failed run"));
    assert!(
        error.contains("`modprobe sch_prio sch_netem`")
            && error.contains(&format!(
                "docker exec {CLUSTER}-worker tc qdisc add dev eth0 root handle 1: prio"
            ))
            && error.contains("Specified qdisc kind is unknown"),
        "{error}"
    );
    let calls = fakes.calls();
    let blocks = blocks(&calls, &[1 + 18, 4]);
    assert_eq!(blocks[0][&format!("{CLUSTER}-worker")], [ROOT]);
    assert_eq!(blocks[1], root_removed(), "teardown");
}

/// Ctrl-C right after the partition: the run stops, partial, and teardown removes it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_interrupted_run_removes_the_faults() {
    let server = ApiServer::start(with_pod_cidrs).await;
    let fakes = fakes();
    let out = tempfile::tempdir().unwrap();
    let cancel = CancellationToken::new();
    // The engine notes an action just before applying it.
    let progress = Notes::new(Some(("cut: network between", cancel.clone())));
    let outcome = run(
        &fakes,
        &server,
        &scenario(
            "  - { at: 1s, name: cut, zoneNetwork: { from: ap-northeast-2c, to: all, partition: true } }\n",
        ),
        out.path(),
        &progress,
        cancel,
    )
    .await;
    assert!(outcome.interrupted && outcome.summary.partial);
    let calls = fakes.calls();
    let blocks = blocks(&calls, &[24, 4]);
    assert_eq!(blocks[0], fault("loss 100%"));
    assert_eq!(blocks[1], root_removed(), "teardown");
    assert_eq!(calls.last().unwrap()[..3], ["kind", "delete", "cluster"]);
}

/// `--allow-existing-cluster`: refused before anything runs, naming the flag and what to do.
#[tokio::test]
async fn an_existing_cluster_is_refused() {
    let fakes = fakes();
    let out = tempfile::tempdir().unwrap();
    let existing = ClusterMode::Existing {
        context: "staging".into(),
    };
    let mut target = KindTarget::new(options(&fakes, existing, out.path().join("kc"), IMAGES));
    let err = engine::run(
        &mut target,
        &scenario(SLOW_HEALED_CUT),
        &run_context(out.path(), TimeScale::REAL),
        &RunOptions { keep: false },
        CancellationToken::new(),
        &engine::Silent,
    )
    .await
    .unwrap_err();
    let text = err.to_string();
    assert!(
        text.starts_with("target `kind` cannot run this scenario; it does not support: zoneNetwork with --allow-existing-cluster: on kind the faults are tc netem rules")
            && text.contains("--cluster NAME"),
        "{text}"
    );
    assert_eq!(err.exit_status(), engine::ExitStatus::InvalidInput);
    assert!(fakes.calls().is_empty(), "nothing ran");
    // A cluster the harness creates or reuses can.
    let caps = engine::Target::capabilities(&KindTarget::new(options(
        &fakes,
        ClusterMode::Reuse("harness-topology-skew".into()),
        out.path().join("kc"),
        IMAGES,
    )));
    assert!(caps.contains(&engine::Capability::ZoneNetwork));
}
