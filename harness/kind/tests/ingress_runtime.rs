//! The kind target's ingress runtime against a scripted API server: the observer polls every
//! replica concurrently (Pod, controller metrics and HAProxy stats CSV through the pod proxy)
//! and turns what it reads into `ingress` events — the first list, a reload with its cause, a
//! runtime-API slot refill, a restart (a new pod UID) — and the churn patches the controller's
//! ConfigMap at its interval with increasing generations and deletes the pods its seeded draws
//! pick, a bounded number of times.

mod support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use harness_core::measure::{EventKind, IngressCause, IngressChange};
use harness_kind::api::KubeApi;
use harness_kind::driver::ingress::churn::{self, ChurnSetup, RestartDraws};
use harness_kind::driver::ingress::intents::Intents;
use harness_kind::driver::ingress::observe::{self, ObserveSetup};
use harness_kind::observer::Observer;
use harness_kind::watch::Recorder;
use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde_json::json;
use support::api_server::{ApiServer, Reply, status};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

const NS: &str = "harness-r1";
const BACKEND: &str = "harness-r1_flagsvc_8080";
const STATS_PORT: u16 = 1936;
const METRICS_PORT: u16 = 10254;

#[derive(Clone)]
struct Replica {
    uid: String,
    full: u64,
    servers: Vec<(&'static str, &'static str, &'static str)>,
}

#[derive(Default)]
struct Script {
    replicas: Vec<Replica>,
    in_flight: u32,
    most_in_flight: u32,
}

fn csv(servers: &[(&str, &str, &str)]) -> String {
    let mut text =
        String::from("# pxname,svname,qcur,status,weight,addr,\nstats,FRONTEND,,OPEN,,,\n");
    for (name, addr, status) in servers {
        text.push_str(&format!("{BACKEND},{name},0,{status},1,{addr},\n"));
    }
    text.push_str(&format!("{BACKEND},BACKEND,0,UP,1,,\n"));
    text
}

fn pods(n: usize) -> Vec<String> {
    (0..n).map(|i| format!("haproxy-ingress-{i}")).collect()
}

/// Answers the observer from `script`; CSV answers take 100 ms, so overlapping polls show.
fn serve(script: Arc<Mutex<Script>>) -> impl Fn(&support::api_server::Seen) -> Reply {
    move |seen| {
        let path = seen.path().to_owned();
        let Some(rest) = path.strip_prefix(&format!("/api/v1/namespaces/{NS}/pods/")) else {
            return status(404, "NotFound", "not scripted");
        };
        let (pod, proxied) = match rest.split_once(':') {
            Some((pod, rest)) => (pod.to_owned(), Some(rest.to_owned())),
            None => (rest.to_owned(), None),
        };
        let index: usize = pod
            .strip_prefix("haproxy-ingress-")
            .and_then(|i| i.parse().ok())
            .unwrap_or(usize::MAX);
        let Some(replica) = script.lock().unwrap().replicas.get(index).cloned() else {
            return status(404, "NotFound", "no such pod");
        };
        match proxied.as_deref() {
            None => Reply::Json(
                200,
                json!({"apiVersion": "v1", "kind": "Pod",
                       "metadata": {"name": pod, "namespace": NS, "uid": replica.uid}}),
            ),
            Some(p) if p == format!("{METRICS_PORT}/proxy/metrics") => Reply::Text(
                200,
                format!(
                    "haproxyingress_updates_total{{status=\"full\"}} {}\nhaproxyingress_updates_total{{status=\"dynamic\"}} 0\n",
                    replica.full
                ),
            ),
            Some(p) if p == format!("{STATS_PORT}/proxy/;csv") => {
                {
                    let mut s = script.lock().unwrap();
                    s.in_flight += 1;
                    s.most_in_flight = s.most_in_flight.max(s.in_flight);
                }
                std::thread::sleep(Duration::from_millis(100));
                script.lock().unwrap().in_flight -= 1;
                Reply::Text(200, csv(&replica.servers))
            }
            Some(other) => status(404, "NotFound", &format!("not scripted: {other}")),
        }
    }
}

fn ingress_events(recorder: &Recorder) -> Vec<(u32, IngressChange, IngressCause, Vec<String>)> {
    recorder
        .lock()
        .events
        .iter()
        .filter_map(|(_, e)| match e {
            EventKind::Ingress {
                replica,
                change,
                cause,
                servers,
            } => Some((*replica, *change, *cause, servers.clone())),
            _ => None,
        })
        .collect()
}

/// Waits (bounded: 5 s) until the recorder holds `n` ingress events.
async fn until_events(
    recorder: &Recorder,
    n: usize,
) -> Vec<(u32, IngressChange, IngressCause, Vec<String>)> {
    for _ in 0..100 {
        let events = ingress_events(recorder);
        if events.len() >= n {
            return events;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!(
        "expected {n} ingress events, got {:?}",
        ingress_events(recorder)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_observer_turns_stats_metrics_and_pods_into_ingress_events() {
    let a = ("flagsvc-a", "10.244.1.5:8080", "UP");
    let b = ("flagsvc-b", "10.244.2.6:8080", "UP");
    let slot = ("srv003", "127.0.0.1:1023", "MAINT");
    let script = Arc::new(Mutex::new(Script {
        replicas: (0..3)
            .map(|i| Replica {
                uid: format!("uid-{i}"),
                full: 1,
                servers: vec![a, b, slot],
            })
            .collect(),
        ..Script::default()
    }));
    let server = ApiServer::start(serve(script.clone())).await;
    let api = KubeApi::new(server.client());
    let recorder = Recorder::new(Observer::new(vec!["z".into()]));
    let intents = Intents::default();
    let stop = CancellationToken::new();
    let setup = ObserveSetup {
        namespace: NS.into(),
        pods: pods(3),
        backend: BACKEND.into(),
        stats_port: STATS_PORT,
        stats_path: "/;csv".into(),
        metrics_port: METRICS_PORT,
        period: Duration::from_millis(300),
    };
    let task = tokio::spawn(observe::observe(
        api,
        setup,
        recorder.clone(),
        intents.clone(),
        stop.clone(),
        Instant::now() + Duration::from_secs(30),
    ));

    // The first poll: every replica starts with the two pods (the empty slot is not listed).
    let events = until_events(&recorder, 3).await;
    let mut starts: Vec<u32> = events.iter().map(|e| e.0).collect();
    starts.sort_unstable();
    assert_eq!(starts, [0, 1, 2]);
    for e in &events {
        assert_eq!((e.1, e.2), (IngressChange::Start, IngressCause::Deploy));
        assert_eq!(e.3, ["flagsvc-a", "flagsvc-b"]);
    }
    // The three replicas' stats were read at the same time, not one after the other.
    assert!(script.lock().unwrap().most_in_flight >= 2);

    // A rewrite: every replica's controller reloads (its `full` counter goes up) with the
    // list in a new order.
    intents.expect_reloads(3, IngressCause::Rewrite);
    for r in &mut script.lock().unwrap().replicas {
        r.full = 2;
        r.servers = vec![b, a, slot];
    }
    let events = until_events(&recorder, 6).await;
    for e in &events[3..6] {
        assert_eq!(
            (e.1, e.2),
            (IngressChange::Reload, IngressCause::Rewrite),
            "{e:?}"
        );
        assert_eq!(e.3, ["flagsvc-b", "flagsvc-a"]);
    }

    // Replica 1's pod is deleted and recreated (new UID, fresh controller counters).
    intents.expect_restart(1, IngressCause::ReloadFailed);
    {
        let mut s = script.lock().unwrap();
        s.replicas[1].uid = "uid-1-new".into();
        s.replicas[1].full = 1;
        s.replicas[1].servers = vec![a, b, slot];
    }
    let events = until_events(&recorder, 7).await;
    assert_eq!(
        events[6],
        (
            1,
            IngressChange::Restart,
            IngressCause::ReloadFailed,
            vec!["flagsvc-a".to_owned(), "flagsvc-b".to_owned()]
        )
    );

    // Replica 2's empty slot refilled through the runtime API: no reload, a longer list.
    script.lock().unwrap().replicas[2].servers = vec![b, a, ("srv003", "10.244.1.9:8080", "UP")];
    let events = until_events(&recorder, 8).await;
    assert_eq!(events[7].0, 2);
    assert_eq!(
        (events[7].1, events[7].2),
        (IngressChange::RuntimeApi, IngressCause::Endpoints)
    );
    assert_eq!(events[7].3, ["flagsvc-b", "flagsvc-a", "srv003"]);

    // Nothing changes: no more events; and the observer stops when told to.
    tokio::time::sleep(Duration::from_millis(700)).await;
    assert_eq!(ingress_events(&recorder).len(), 8);
    stop.cancel();
    tokio::time::timeout(Duration::from_secs(2), task)
        .await
        .expect("the observer stops")
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_observer_ends_at_its_deadline() {
    let script = Arc::new(Mutex::new(Script::default()));
    let server = ApiServer::start(serve(script)).await;
    let setup = ObserveSetup {
        namespace: NS.into(),
        pods: pods(2),
        backend: BACKEND.into(),
        stats_port: STATS_PORT,
        stats_path: "/;csv".into(),
        metrics_port: METRICS_PORT,
        period: Duration::from_millis(50),
    };
    let started = Instant::now();
    tokio::time::timeout(
        Duration::from_secs(3),
        observe::observe(
            KubeApi::new(server.client()),
            setup,
            Recorder::new(Observer::new(vec![])),
            Intents::default(),
            CancellationToken::new(),
            started + Duration::from_millis(400),
        ),
    )
    .await
    .expect("bounded by its deadline");
    assert!(started.elapsed() < Duration::from_secs(2));
    // Missing pods are polled but give no events.
    assert!(server.calls().len() >= 2);
}

/// The controller's ConfigMap as deployed (generation 0).
fn deployed_config_map() -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some("haproxy-ingress".into()),
            namespace: Some(NS.into()),
            ..Default::default()
        },
        data: Some([("config-global".to_owned(), "# harness rewrite 0".to_owned())].into()),
        ..Default::default()
    }
}

#[tokio::test]
async fn the_churn_rewrites_at_its_interval_and_restarts_the_seeded_picks() {
    let server = ApiServer::start(|seen| match seen.method.as_str() {
        "PATCH" => Reply::Json(200, seen.json()),
        // Replica 0's pod is always away (being recreated): no failure.
        "DELETE" if seen.path().ends_with("/haproxy-ingress-0") => {
            status(404, "NotFound", "pods \"haproxy-ingress-0\" not found")
        }
        "DELETE" => Reply::Json(
            200,
            json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success"}),
        ),
        _ => status(404, "NotFound", "not scripted"),
    })
    .await;
    let api = KubeApi::new(server.client());
    let intents = Intents::default();
    let (seed, rate, replicas) = (7, 0.4, 4);
    let setup = ChurnSetup {
        namespace: NS.into(),
        pods: pods(replicas),
        interval: Duration::from_millis(150),
        reload_failure_rate: rate,
        seed,
    };
    let recorder = Recorder::new(Observer::new(vec![]));
    let started = Instant::now();
    // 0.8 s at one rewrite per 150 ms: 5 rewrites, then the churn ends by itself.
    tokio::time::timeout(
        Duration::from_secs(5),
        churn::churn(
            api,
            setup,
            deployed_config_map(),
            intents.clone(),
            recorder.clone(),
            CancellationToken::new(),
            started + Duration::from_millis(800),
        ),
    )
    .await
    .expect("the churn is bounded");
    let elapsed = started.elapsed();
    assert!(elapsed >= Duration::from_millis(750), "{elapsed:?}");

    let calls = server.calls();
    let patches: Vec<String> = calls
        .iter()
        .filter(|c| c.method == "PATCH")
        .map(|c| {
            assert_eq!(
                c.path(),
                format!("/api/v1/namespaces/{NS}/configmaps/haproxy-ingress")
            );
            assert_eq!(c.query("fieldManager").as_deref(), Some("harness"));
            c.json()["data"]["config-global"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    assert_eq!(
        patches,
        (1..=5)
            .map(|g| format!("# harness rewrite {g}"))
            .collect::<Vec<_>>()
    );

    // The deletions: after each rewrite, the replicas the seeded draws pick, in order.
    let mut draws = RestartDraws::new(seed, replicas as u32);
    let mut expected = Vec::new();
    for _ in 0..5 {
        for r in draws.draw(rate) {
            expected.push(format!("/api/v1/namespaces/{NS}/pods/haproxy-ingress-{r}"));
        }
    }
    assert!(
        !expected.is_empty(),
        "seed {seed} picks no restart: choose another"
    );
    let deleted: Vec<String> = calls
        .iter()
        .filter(|c| c.method == "DELETE")
        .map(|c| c.path().to_owned())
        .collect();
    assert_eq!(deleted, expected);
    assert!(
        expected.iter().any(|p| p.ends_with("-0")),
        "seed {seed} never picks replica 0: choose another"
    );
    // A pod already away is no failure: no note.
    assert!(
        recorder.lock().events.is_empty(),
        "{:?}",
        recorder.lock().events
    );
    // Each call in its place: a rewrite, then that rewrite's deletions.
    assert_eq!(calls[0].method, "PATCH");
    // The observer will attribute the restarts.
    let restarted: Vec<u32> = expected
        .iter()
        .map(|p| p.rsplit('-').next().unwrap().parse().unwrap())
        .collect();
    assert_eq!(
        intents.take_restart(restarted[restarted.len() - 1]),
        IngressCause::ReloadFailed
    );
}
