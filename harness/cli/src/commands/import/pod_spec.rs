//! What the Deployment and its pod template say about the pods' lives, as `service` fields:
//! the readiness probe (of the serving container), the rollout strategy, termination (grace
//! period, `preStop`), the not-ready/unreachable tolerations, and the harness's own sidecar when
//! a container runs it (its `--max-concurrency`, `--queue-size`, `--queue-timeout` flags).

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{Container, PodSpec, Service};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::text::{Field, Note, NoteKind, quoted, seconds};

/// The container that serves the Service: the one exposing the Service's first target port
/// (by number or name), else the first with a readiness probe, else the first.
pub fn serving_container<'a>(pod: &'a PodSpec, service: &Service) -> &'a Container {
    let target = service
        .spec
        .as_ref()
        .and_then(|s| s.ports.as_ref())
        .and_then(|p| p.first())
        .and_then(|p| p.target_port.clone());
    let exposes = |c: &&Container| {
        c.ports.iter().flatten().any(|p| match &target {
            Some(IntOrString::Int(n)) => p.container_port == *n,
            Some(IntOrString::String(name)) => p.name.as_deref() == Some(name),
            None => false,
        })
    };
    pod.containers
        .iter()
        .find(exposes)
        .or_else(|| pod.containers.iter().find(|c| c.readiness_probe.is_some()))
        .unwrap_or(&pod.containers[0])
}

/// `service.readinessProbe`.
pub fn readiness_probe(container: &Container, notes: &mut Vec<Note>) -> Field {
    let Some(p) = &container.readiness_probe else {
        notes.push(Note {
            kind: NoteKind::Approximation,
            field: "service.readinessProbe".into(),
            text: format!(
                "container {} has no readiness probe, so Kubernetes counts it ready once started; the harness always probes, and a 1 s period is the nearest",
                container.name
            ),
        });
        return Field::read("readinessProbe", "{ period: 1s }")
            .with_comment("no readiness probe in the pod: ready about as soon as started");
    };
    Field::read(
        "readinessProbe",
        format!(
            "{{ period: {}, initialDelay: {}, failureThreshold: {}, successThreshold: {} }}",
            seconds(p.period_seconds.unwrap_or(10).into()),
            seconds(p.initial_delay_seconds.unwrap_or(0).into()),
            p.failure_threshold.unwrap_or(3),
            p.success_threshold.unwrap_or(1),
        ),
    )
    .with_comment(format!("container {}", container.name))
}

fn int_or_percent(v: Option<&IntOrString>) -> String {
    match v {
        None => "25%".to_owned(),
        Some(IntOrString::Int(n)) => n.to_string(),
        Some(IntOrString::String(s)) => s.clone(),
    }
}

/// `service.rollout`.
pub fn rollout(deployment: &Deployment, notes: &mut Vec<Note>) -> Field {
    let spec = deployment.spec.clone();
    let min_ready = seconds(spec.min_ready_seconds.unwrap_or(0).into());
    let strategy = spec.strategy.unwrap_or_default();
    if strategy.type_.as_deref() == Some("Recreate") {
        notes.push(Note {
            kind: NoteKind::Approximation,
            field: "service.rollout".into(),
            text: "strategy Recreate (every old pod deleted before new ones start) is written as a rolling update with maxSurge 0 and maxUnavailable 100%, which does the same".into(),
        });
        return Field::read(
            "rollout",
            format!("{{ maxSurge: 0, maxUnavailable: 100%, minReadySeconds: {min_ready} }}"),
        )
        .with_comment("strategy Recreate");
    }
    let rolling = strategy.rolling_update.unwrap_or_default();
    Field::read(
        "rollout",
        format!(
            "{{ maxSurge: {}, maxUnavailable: {}, minReadySeconds: {min_ready} }}",
            int_or_percent(rolling.max_surge.as_ref()),
            int_or_percent(rolling.max_unavailable.as_ref()),
        ),
    )
}

/// `service.termination` (grace period and the serving container's `preStop`).
pub fn termination(pod: &PodSpec, container: &Container, notes: &mut Vec<Note>) -> Field {
    let grace = seconds(pod.termination_grace_period_seconds.unwrap_or(30));
    let pre_stop = container
        .lifecycle
        .as_ref()
        .and_then(|l| l.pre_stop.as_ref());
    let hook = match pre_stop {
        None => None,
        Some(h) if h.sleep.is_some() => Some(format!(
            "{{ sleep: {} }}",
            seconds(h.sleep.as_ref().map_or(0, |s| s.seconds))
        )),
        Some(h) if h.exec.is_some() => {
            let command: Vec<String> = h
                .exec
                .as_ref()
                .and_then(|e| e.command.clone())
                .unwrap_or_default()
                .iter()
                .map(|a| quoted(a))
                .collect();
            Some(format!("{{ exec: [{}] }}", command.join(", ")))
        }
        Some(_) => {
            notes.push(Note {
                kind: NoteKind::NotReproduced,
                field: "service.termination.preStop".into(),
                text: format!(
                    "container {}'s preStop hook is an httpGet or tcpSocket action; the scenario has sleep and exec hooks only, so none is written (add the hook's duration as a sleep if it waits)",
                    container.name
                ),
            });
            None
        }
    };
    let value = match hook {
        Some(h) => format!("{{ gracePeriod: {grace}, preStop: {h} }}"),
        None => format!("{{ gracePeriod: {grace} }}"),
    };
    Field::read("termination", value)
}

/// `service.notReadyToleration`, when the pods tolerate a NotReady node for other than the
/// 300 s Kubernetes' DefaultTolerationSeconds admission plugin adds.
pub fn not_ready_toleration(pod: &PodSpec, notes: &mut Vec<Note>) -> Option<Field> {
    let toleration = pod
        .tolerations
        .iter()
        .flatten()
        .find(|t| t.key.as_deref() == Some("node.kubernetes.io/not-ready"))?;
    match toleration.toleration_seconds {
        Some(300) => None,
        Some(s) if s >= 0 => Some(Field::read("notReadyToleration", seconds(s))),
        _ => {
            notes.push(Note {
                kind: NoteKind::NotReproduced,
                field: "service.notReadyToleration".into(),
                text: "the pods tolerate a NotReady node forever (no tolerationSeconds): the scenario needs a number of seconds, so the 300 s default is left; raise it past the load's length for the same effect".into(),
            });
            None
        }
    }
}

/// The harness's sidecar, when a container runs it: `service.sidecar` from its flags.
pub fn recognised_sidecar(pod: &PodSpec) -> Option<Field> {
    pod.containers.iter().find_map(|c| {
        let words: Vec<String> = c
            .command
            .iter()
            .flatten()
            .chain(c.args.iter().flatten())
            .cloned()
            .collect();
        let flag = |name: &str| {
            words.iter().enumerate().find_map(|(i, w)| {
                w.strip_prefix(&format!("{name}="))
                    .map(str::to_owned)
                    .or_else(|| (w == name).then(|| words.get(i + 1).cloned()).flatten())
            })
        };
        let max = flag("--max-concurrency")?;
        let max: u32 = max.parse().ok()?;
        let queue = flag("--queue-size")
            .and_then(|q| q.parse::<u32>().ok())
            .unwrap_or(0);
        let timeout = flag("--queue-timeout").unwrap_or_else(|| "0s".into());
        Some(
            Field::read(
                "sidecar",
                format!("{{ maxConcurrency: {max}, queueSize: {queue}, queueTimeout: {timeout} }}"),
            )
            .with_comment(format!("container {}'s flags", c.name)),
        )
    })
}
