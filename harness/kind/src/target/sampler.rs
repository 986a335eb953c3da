//! The sidecars' metrics while the load runs: every running service pod scraped once a second
//! through the API server's pod proxy, all pods of a round at once (each scrape bounded by
//! [`SCRAPE_TIMEOUT`]), the samples kept per pod in the pods' creation order.

use std::collections::BTreeSet;
use std::time::Duration;

use harness_core::engine::RunClock;
use harness_core::measure::PodSample;
use tokio_util::sync::CancellationToken;
use workload_contract::sidecar::SidecarMetrics;

use super::Samples;
use crate::api::KubeApi;
use crate::manifests::SIDECAR_ADMIN_PORT;
use crate::watch::Recorder;

/// How long one pod's scrape may take; a pod that has not answered by then reads as no
/// metrics in that round.
pub(super) const SCRAPE_TIMEOUT: Duration = Duration::from_secs(2);

/// Scrapes every running service pod's sidecar once a second through the pod proxy, until
/// `stop`, then once more (the last sample holds the final counters).
pub(super) async fn sample(
    clock: RunClock,
    api: KubeApi,
    ns: String,
    sidecar: bool,
    recorder: Recorder,
    samples: Samples,
    stop: CancellationToken,
) {
    let mut ticker = tokio::time::interval(Duration::from_secs(1));
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    loop {
        let last = tokio::select! {
            () = stop.cancelled() => true,
            _ = ticker.tick() => false,
        };
        let (pods, ready): (Vec<String>, BTreeSet<String>) = {
            let r = recorder.lock();
            (
                r.observer
                    .running_pods()
                    .into_iter()
                    .filter(|p| p.node.is_some())
                    .map(|p| p.name.clone())
                    .collect(),
                r.observer.ready_pods().clone(),
            )
        };
        let t_s = clock.now_s();
        let metrics = scrape_all(&api, &ns, &pods, sidecar).await;
        let mut samples = samples.lock().unwrap_or_else(|e| e.into_inner());
        for (pod, metrics) in pods.iter().zip(metrics) {
            let ready = ready.contains(pod);
            samples
                .entry(pod.clone())
                .or_default()
                .push(PodSample::scraped(t_s, ready, metrics));
        }
        drop(samples);
        if last {
            return;
        }
    }
}

/// Each pod's sidecar metrics in `pods`' order, all scraped at once: `None` for a pod that did
/// not answer within [`SCRAPE_TIMEOUT`] or with an error, and for every pod without sidecars.
async fn scrape_all(
    api: &KubeApi,
    ns: &str,
    pods: &[String],
    sidecar: bool,
) -> Vec<Option<SidecarMetrics>> {
    if !sidecar {
        return pods.iter().map(|_| None).collect();
    }
    let scrapes = pods.iter().map(|pod| async move {
        let text = tokio::time::timeout(
            SCRAPE_TIMEOUT,
            api.pod_proxy_get(ns, pod, SIDECAR_ADMIN_PORT, "/metrics"),
        )
        .await;
        text.ok()
            .and_then(Result::ok)
            .map(|text| SidecarMetrics::parse(&text))
    });
    // `join_all` gives the outputs in the order of its input.
    futures::future::join_all(scrapes).await
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use k8s_openapi::api::core::v1::Pod;
    use mock_apiserver::{ApiServer, Gate, Reply, status};
    use serde_json::json;

    use super::*;
    use crate::observer::{Change, Observer};

    const PODS: usize = 4;

    fn running_pod(i: usize) -> Pod {
        serde_json::from_value(json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": { "name": format!("svc-{i}"), "namespace": "harness-r1" },
            "spec": { "nodeName": "worker", "containers": [{ "name": "svc" }] },
            "status": { "phase": "Running" }
        }))
        .unwrap()
    }

    /// Each pod-proxy scrape is held until all four of its round have arrived, for longer than
    /// a scrape may take: scraped one after the other, the first would wait for the others and
    /// time out, and no pod's first sample would have its metrics.
    #[tokio::test]
    async fn the_pods_of_a_round_are_scraped_at_once_and_kept_in_their_order() {
        let gate = Arc::new(Gate::new(PODS, SCRAPE_TIMEOUT * 3));
        let held = gate.clone();
        let server = ApiServer::start(move |seen| {
            let path = seen.path();
            let pod = (0..PODS).find(|i| {
                path == format!(
                    "/api/v1/namespaces/harness-r1/pods/svc-{i}:{SIDECAR_ADMIN_PORT}/proxy/metrics"
                )
            });
            match pod {
                // Each pod counts its own number of requests: 10, 20, 30, 40.
                Some(i) => held.pass(Reply::Text(
                    200,
                    format!("sidecar_received_total {}\n# EOF\n", 10 * (i + 1)),
                )),
                None => status(404, "NotFound", &format!("not scripted: {}", seen.uri)),
            }
        })
        .await;
        let recorder = Recorder::new(Observer::new(vec!["z".into()]));
        // Created in reverse name order, so that answers given to the wrong pods would show.
        for i in (0..PODS).rev() {
            recorder.apply(Change::Pod(Box::new(running_pod(i))));
        }
        let samples = Samples::default();
        let stop = CancellationToken::new();
        // Stopped before it starts: one round, or two when the first tick wins the race.
        stop.cancel();
        let sampler = sample(
            RunClock::starting_after(Duration::ZERO, Duration::from_secs(1)),
            KubeApi::new(server.client()),
            "harness-r1".into(),
            true,
            recorder,
            samples.clone(),
            stop,
        );
        tokio::time::timeout(Duration::from_secs(30), sampler)
            .await
            .expect("the sampler ends once stopped");
        let samples = samples.lock().unwrap();
        let rounds = samples["svc-0"].len();
        assert!((1..=2).contains(&rounds), "{samples:?}");
        assert_eq!(gate.passed(), PODS * rounds);
        for i in 0..PODS {
            let got: Vec<u64> = samples[&format!("svc-{i}")]
                .iter()
                .map(|s| s.received)
                .collect();
            let want = 10 * (i as u64 + 1);
            assert_eq!(got, vec![want; rounds], "svc-{i}: {samples:?}");
        }
    }
}
