//! The load and what is measured on kind: the generator pods (created at the load's start, or
//! at their `startAt`), the sidecars' metrics scraped every second through the API server's pod
//! proxy ([`super::sampler`]), and at the end each generator's report read from its pod's log, the load balancer's
//! accounting (through the pod proxy), the samples and the timeline as the same [`RunData`] the
//! local target returns.

use std::time::Duration;

use harness_core::clock::RunClock;
use harness_core::engine::TargetError;
use harness_core::measure::{EventKind, GeneratorRun, RunData};
use harness_core::scenario::model::{Scenario, Via};
use harness_core::target_kit::{self, PlacedPod};
use tokio::time::Instant;
use workload_contract::loadgen::Report;

use super::{KindError, Running, sampler};
use crate::api::KubeApi;
use crate::images::Manifest as ImageManifest;
use crate::manifests::{self, RenderInput};

/// How long a generator may take to write its report after its load ends (or after it was
/// asked to stop), beyond the request timeout.
const REPORT_SLACK: Duration = Duration::from_secs(60);

/// The loadgen report in a generator pod's log: the last JSON object printed, which starts
/// with a line `{` (pod logs interleave the container's stdout and stderr).
pub fn report_from_log(log: &str) -> Result<Report, String> {
    let start = log
        .rmatch_indices("\n{")
        .map(|(i, _)| i + 1)
        .chain(log.starts_with('{').then_some(0))
        .find(|&i| Report::from_json(trim_after_object(&log[i..])).is_ok())
        .ok_or_else(|| {
            let tail: Vec<&str> = log.lines().rev().take(10).collect();
            format!(
                "no loadgen report in its log; its last lines:\n  {}",
                tail.into_iter().rev().collect::<Vec<_>>().join("\n  ")
            )
        })?;
    Report::from_json(trim_after_object(&log[start..])).map_err(|e| e.to_string())
}

/// `text` up to the line `}` that closes an object starting at its first character.
fn trim_after_object(text: &str) -> &str {
    match text.find("\n}") {
        Some(end) => &text[..end + 2],
        None => text,
    }
}

pub(super) async fn start_load(run: &mut Running, clock: &RunClock) -> Result<(), TargetError> {
    run.clock = Some(*clock);
    let api = run.api()?.clone();
    let ns = run.namespace()?.to_owned();
    let images = run
        .images
        .clone()
        .ok_or_else(|| TargetError::new("starting the load", KindError::NotDeployed))?;
    let service_ip = cluster_ip(&api, &ns, &run.scenario.service.name).await?;
    let via_lb = run
        .scenario
        .load
        .generators
        .iter()
        .any(|g| g.via == Via::LoadBalancer);
    let lb_ip = if via_lb {
        cluster_ip(&api, &ns, manifests::loadbalancer::LB_NAME).await?
    } else {
        manifests::lb_dns_name(&run.ctx.run_id)
    };
    let via_ingress = run
        .scenario
        .load
        .generators
        .iter()
        .any(|g| g.via == Via::Ingress);
    let ingress_ip = if via_ingress {
        cluster_ip(&api, &ns, manifests::ingress::CONTROLLER).await?
    } else {
        manifests::ingress_dns_name(&run.ctx.run_id)
    };
    let hosts = Hosts {
        service: service_ip,
        lb: lb_ip,
        ingress: ingress_ip,
    };
    if let Some(ingress) = &run.ingress {
        // The churn runs with the load: until its end.
        let until = clock.load_start + clock.duration;
        if let Some(task) = ingress.spawn_churn(&api, &run.recorder, &run.stop, until) {
            run.tasks.push(task);
        }
    }
    let (sampling, sampled_ns, recorder) = (api.clone(), ns.clone(), run.recorder.clone());
    let sidecar = run.scenario.service.sidecar.is_some();
    run.sampler.start(*clock, move || {
        let (api, ns, recorder) = (sampling.clone(), sampled_ns.clone(), recorder.clone());
        async move { sampler::sample_round(&api, &ns, sidecar, &recorder).await }
    });
    for (i, generator) in run.scenario.load.generators.clone().iter().enumerate() {
        let pod = generator_pod(&run.scenario, &run.ctx, &images, &hosts, i)
            .map_err(|e| TargetError::new(format!("rendering generator {}", generator.name), e))?;
        let pod_name = pod.metadata.name.clone().unwrap_or_default();
        if generator.start_at.is_zero() {
            api.apply_namespaced(&pod).await.map_err(|e| {
                TargetError::new(format!("starting generator {}", generator.name), e)
            })?;
            lock(&run.generators).push((generator.name.clone(), pod_name));
            continue;
        }
        let (api, generators, recorder, stop) = (
            api.clone(),
            run.generators.clone(),
            run.recorder.clone(),
            run.stop.clone(),
        );
        let start = clock.load_start + generator.start_at;
        let name = generator.name.clone();
        run.tasks.push(tokio::spawn(async move {
            tokio::select! {
                () = stop.cancelled() => return,
                () = tokio::time::sleep_until(start) => {}
            }
            match api.apply_namespaced(&pod).await {
                Ok(_) => lock(&generators).push((name, pod_name)),
                Err(e) => recorder.record(vec![EventKind::Note {
                    message: format!("generator {name} did not start: {e}"),
                }]),
            }
        }));
    }
    Ok(())
}

fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The ClusterIP of Service `name`.
async fn cluster_ip(api: &KubeApi, ns: &str, name: &str) -> Result<String, TargetError> {
    let what = format!("reading Service {name}'s ClusterIP");
    let service = api
        .get_service(ns, name)
        .await
        .map_err(|e| TargetError::new(what.clone(), e))?;
    service
        .spec
        .and_then(|s| s.cluster_ip)
        .filter(|ip| !ip.is_empty() && ip != "None")
        .ok_or_else(|| TargetError::new(what, KindError::NoClusterIp))
}

/// Where generators send: the ClusterIPs of the Service, the load balancer's and the ingress
/// controller's Services (each a DNS name when no generator uses it).
struct Hosts {
    service: String,
    lb: String,
    ingress: String,
}

/// Generator `index`'s pod, sending to its `via`'s host.
fn generator_pod(
    scenario: &Scenario,
    ctx: &harness_core::engine::RunContext,
    images: &ImageManifest,
    hosts: &Hosts,
    index: usize,
) -> Result<k8s_openapi::api::core::v1::Pod, KindError> {
    let input = RenderInput {
        run_id: &ctx.run_id,
        images,
        service_host: hosts.service.clone(),
        lb_host: hosts.lb.clone(),
        ingress_host: hosts.ingress.clone(),
        time_scale: ctx.time_scale,
        seed: ctx.seed,
    };
    Ok(manifests::generator_pod(
        scenario,
        &input,
        index,
        &scenario.load.generators[index],
    )?)
}

/// Waits for a generator pod to finish (or stops it when `interrupted`) and reads its report.
async fn finish_generator(
    api: &KubeApi,
    ns: &str,
    pod: &str,
    interrupted: bool,
    deadline: Instant,
) -> Result<Report, KindError> {
    if interrupted {
        // SIGTERM through deletion: loadgen stops issuing and prints a partial report, which
        // the followed log still delivers after the pod is gone.
        let follow = api.follow_logs(ns, pod, "loadgen");
        let delete = api.delete_pod(ns, pod);
        let (log, deleted) = tokio::join!(tokio::time::timeout(REPORT_SLACK, follow), async {
            tokio::time::sleep(Duration::from_millis(200)).await;
            delete.await
        });
        deleted?;
        let log = log.map_err(|_| KindError::Generator {
            generator: pod.to_owned(),
            reason: "its log did not end within a minute of stopping it".into(),
        })??;
        return report_from_log(&log).map_err(|reason| KindError::Generator {
            generator: pod.to_owned(),
            reason,
        });
    }
    loop {
        let current = api.get_pod(ns, pod).await?;
        let phase = current
            .status
            .as_ref()
            .and_then(|s| s.phase.clone())
            .unwrap_or_default();
        if phase == "Succeeded" || phase == "Failed" {
            let log = api.logs(ns, pod, "loadgen").await?;
            return report_from_log(&log).map_err(|reason| KindError::Generator {
                generator: pod.to_owned(),
                reason: format!("{phase}: {reason}"),
            });
        }
        if Instant::now() >= deadline {
            return Err(KindError::Generator {
                generator: pod.to_owned(),
                reason: format!(
                    "still {} when its report was due ({})",
                    if phase.is_empty() { "unknown" } else { &phase },
                    super::deploy::describe_pod(&current)
                ),
            });
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

pub(super) async fn collect(run: &mut Running, interrupted: bool) -> Result<RunData, TargetError> {
    let clock = run
        .clock
        .ok_or_else(|| TargetError::new("collecting", KindError::NotDeployed))?;
    let api = run.api()?.clone();
    let ns = run.namespace()?.to_owned();
    let duration_s = clock.measured_s(interrupted);
    let deadline =
        clock.load_start + clock.duration + run.scenario.load.request_timeout + REPORT_SLACK;
    let started = lock(&run.generators).clone();
    let mut generators = Vec::new();
    let mut failures = Vec::new();
    for (name, pod) in started {
        let zone = run
            .scenario
            .load
            .generators
            .iter()
            .find(|g| g.name == name)
            .map(|g| g.zone.clone())
            .unwrap_or_default();
        match finish_generator(&api, &ns, &pod, interrupted, deadline).await {
            Ok(report) => generators.push(GeneratorRun { name, zone, report }),
            Err(e) => failures.push(format!("{name}: {e}")),
        }
    }
    let samples = run.sampler.finish(Duration::from_secs(10)).await;
    let (pods, events) = {
        let recorded = run.recorder.lock();
        let placed = recorded
            .observer
            .pods()
            .into_iter()
            .filter(|p| p.node.is_some())
            .map(|p| PlacedPod {
                name: p.name.clone(),
                node: p.node.clone().unwrap_or_default(),
                zone: p.zone.clone().unwrap_or_default(),
            });
        let pods = target_kit::pod_runs(
            placed,
            &samples,
            &recorded.exits(run.clock.as_ref(), run.deployed_at),
            target_kit::max_concurrency(&run.scenario),
        );
        let events =
            target_kit::events_on_clock(&recorded.events, run.clock.as_ref(), run.deployed_at);
        (pods, events)
    };
    if !failures.is_empty() {
        return Err(TargetError::new(
            "collecting the generators' reports",
            KindError::Generator {
                generator: "reports".into(),
                reason: failures.join("; "),
            },
        ));
    }
    let (lb, lb_routable, lb_accounts) = match &run.lb_pod {
        Some(pod) => {
            let stats = super::lb::stats(&api, &ns, pod)
                .await
                .map_err(|e| TargetError::new("collecting the load balancer's counts", e))?;
            harness_core::measure::lb_data(&stats, &clock)
        }
        None => Default::default(),
    };
    Ok(RunData {
        load_started_unix_ms: clock.load_start_unix_ms,
        duration_s,
        generators,
        pods: pods.pods,
        events,
        lb,
        lb_routable,
        lb_accounts,
        counters_cut: pods.counters_cut,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report_json(attempted: u64) -> String {
        let report = Report {
            schema: workload_contract::loadgen::SCHEMA.into(),
            attempted,
            ..Report::default()
        };
        serde_json::to_string_pretty(&report).unwrap()
    }

    #[test]
    fn the_report_is_found_among_the_log_lines() {
        let log = format!(
            "INFO starting {{not json}}\n{}\nINFO done\n",
            report_json(7)
        );
        assert_eq!(report_from_log(&log).unwrap().attempted, 7);
        // The log is nothing but the report.
        assert_eq!(report_from_log(&report_json(3)).unwrap().attempted, 3);
        // Two objects (a restart would print two): the last one counts.
        let two = format!("{}\n{}\n", report_json(1), report_json(2));
        assert_eq!(report_from_log(&two).unwrap().attempted, 2);
    }

    #[test]
    fn a_log_without_a_report_says_what_it_ended_with() {
        let err = report_from_log("INFO starting\nERROR cannot resolve flagsvc:80\n").unwrap_err();
        assert!(err.contains("no loadgen report"), "{err}");
        assert!(err.contains("ERROR cannot resolve flagsvc:80"), "{err}");
    }
}
