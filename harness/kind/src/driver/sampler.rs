//! One round of the sidecars' metrics while the load runs: every running service pod scraped
//! through the API server's pod proxy, all pods of a round at once (each scrape bounded by
//! [`SCRAPE_TIMEOUT`]), in the pods' creation order. The once-a-second loop around it is
//! [`harness_core::target_kit::Sampler`]'s.

use std::collections::BTreeSet;
use std::time::Duration;

use harness_core::target_kit::ScrapedPod;
use workload_contract::sidecar::SidecarMetrics;

use crate::api::KubeApi;
use crate::manifests::SIDECAR_ADMIN_PORT;
use crate::watch::Recorder;

/// How long one pod's scrape may take; a pod that has not answered by then reads as no
/// metrics in that round.
pub(super) const SCRAPE_TIMEOUT: Duration = Duration::from_secs(2);

/// One round: every running service pod's sidecar scraped at once through the pod proxy,
/// with its readiness as the watchers last saw it.
pub(super) async fn sample_round(
    api: &KubeApi,
    ns: &str,
    sidecar: bool,
    recorder: &Recorder,
) -> Vec<ScrapedPod> {
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
    let metrics = scrape_all(api, ns, &pods, sidecar).await;
    pods.into_iter()
        .zip(metrics)
        .map(|(name, metrics)| ScrapedPod {
            ready: ready.contains(&name),
            name,
            has_sidecar: sidecar,
            metrics,
        })
        .collect()
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
        let round = tokio::time::timeout(
            Duration::from_secs(30),
            sample_round(
                &KubeApi::new(server.client()),
                "harness-r1",
                true,
                &recorder,
            ),
        )
        .await
        .expect("a round ends");
        assert_eq!(gate.passed(), PODS);
        let names: Vec<&str> = round.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(
            names,
            ["svc-3", "svc-2", "svc-1", "svc-0"],
            "creation order"
        );
        for i in 0..PODS {
            let pod = round.iter().find(|p| p.name == format!("svc-{i}")).unwrap();
            let want = 10 * (i as u64 + 1);
            assert_eq!(
                pod.metrics.map(|m| m.received),
                Some(want),
                "svc-{i}: {round:?}"
            );
        }
    }
}
