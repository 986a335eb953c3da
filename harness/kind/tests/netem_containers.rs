//! The `zoneNetwork` commands on real containers: two containers on a private Docker network
//! the test creates stand for a node of zone a and a node of zone b (named as kind names nodes,
//! `harness-…-worker`, `-worker2`), each with `NET_ADMIN` (kind nodes are privileged) and `tc`.
//! No image can be pulled here, so the image is built `FROM scratch`: the host's `tc` with the
//! shared libraries `ldd` lists and the dynamic loader, copied in at the same paths, plus the
//! workspace's static flagsvc (the server in both) and loadgen (the client). The addresses
//! come from the implementation's `docker inspect`; the commands from its [`ZoneNet`], run by
//! its [`Cluster::tc`] and removed by its teardown step [`Cluster::tc_clean`]. loadgen in the
//! zone-a container measures the round trip to flagsvc in the zone-b container: a delay of D
//! each way makes its median at least 2·D (and at least 2·D more than before); clearing the
//! fault brings it back under D; a partition makes every request fail (dropped SYNs: timeouts),
//! and teardown's removal restores it. Lower bounds only: nothing here asserts a tight upper
//! bound on timings.
//!
//! Skipped, saying so, where no Docker engine answers (a failure under
//! `HARNESS_REQUIRE_DOCKER=1`), and where the kernel has no `prio` or `netem` qdisc (this
//! project's build machines: their kernel is built without `CONFIG_NET_SCH_PRIO` and
//! `CONFIG_NET_SCH_NETEM`). Then every generated command is still run, and must have been
//! parsed by `tc` (a refusal by the kernel, exit status 2, not a usage error, 1); a failure
//! under `HARNESS_REQUIRE_NETEM=1`.

mod support;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use harness_core::scenario::model::{ZoneFault, ZoneNetworkChange, ZoneScope};
use harness_kind::exec::{Cmd, ExecError, Toolbox};
use harness_kind::lifecycle::{Cluster, LifecycleError};
use harness_kind::netem::{Layout, Member, NodeCommands, ZoneNet};
use serde_json::Value;
use support::docker::{Network, built_workloads, docker_or_skip, unique_id};

/// The delay each way.
const DELAY: Duration = Duration::from_millis(50);

/// The host's `tc`, if installed.
fn host_tc() -> Option<PathBuf> {
    ["/sbin/tc", "/usr/sbin/tc", "/bin/tc", "/usr/bin/tc"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.is_file())
}

/// Copies `file` (following links) into `context` at its own absolute path.
fn copy_at_same_path(context: &Path, file: &Path) {
    let target = context.join(file.strip_prefix("/").unwrap());
    std::fs::create_dir_all(target.parent().unwrap()).unwrap();
    std::fs::copy(file, &target)
        .unwrap_or_else(|e| panic!("copying {} into the image: {e}", file.display()));
}

/// The files `ldd` says `binary` loads (libraries and the loader), by absolute path.
fn shared_libraries(tools: &Toolbox, binary: &Path) -> Vec<PathBuf> {
    let out = tools
        .output(&Cmd::new("ldd").arg(binary.display().to_string()))
        .unwrap();
    out.stdout
        .lines()
        .filter_map(|line| line.split_whitespace().find(|w| w.starts_with('/')))
        .map(PathBuf::from)
        .collect()
}

/// Removes the containers and the image when dropped (before the network).
struct Cleanup {
    tools: Toolbox,
    containers: Vec<String>,
    image: String,
}

impl Drop for Cleanup {
    fn drop(&mut self) {
        for c in &self.containers {
            let _ = self.tools.output(&Cmd::new("docker").args(["rm", "-f", c]));
        }
        let _ = self
            .tools
            .output(&Cmd::new("docker").args(["rmi", "-f", &self.image]));
    }
}

/// Waits until flagsvc in `container` printed its `listening` line.
fn wait_listening(tools: &Toolbox, container: &str) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let logs = tools
            .output(&Cmd::new("docker").args(["logs", container]))
            .unwrap();
        if logs.stdout.contains("listening http=") {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "flagsvc in {container} did not start: {}{}",
            logs.stdout,
            logs.stderr
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// loadgen in `from` against flagsvc at `to`: its JSON report.
fn load(tools: &Toolbox, from: &str, to: &str, timeout: &str) -> Value {
    let url = format!("http://{to}:8080/flags/checkout");
    let out = tools
        .output(
            &Cmd::new("docker")
                .args(["exec", from, "/loadgen", "run", "--url", &url])
                .args(["--rate", "20", "--duration", "2s", "--connections", "8"])
                .args(["--timeout", timeout, "--output", "json"])
                .timeout(Duration::from_secs(60)),
        )
        .unwrap();
    serde_json::from_str(&out.stdout)
        .unwrap_or_else(|e| panic!("loadgen's report does not parse: {e}\n{}", out.stdout))
}

fn p50(report: &Value) -> f64 {
    let answered: u64 = report["responses"]
        .as_object()
        .unwrap()
        .values()
        .map(|v| v.as_u64().unwrap())
        .sum();
    assert!(answered > 0, "nothing answered: {report:#}");
    report["latency_ms"]["p50"].as_f64().unwrap()
}

fn run_all(cluster: &Cluster, commands: &[NodeCommands]) -> Result<(), LifecycleError> {
    for node in commands {
        for args in &node.commands {
            cluster.tc(&node.node, args)?;
        }
    }
    Ok(())
}

/// The kernel's `CONFIG_NET_SCH_PRIO`/`NETEM` lines, when it publishes its config.
fn kernel_config() -> String {
    let out = std::process::Command::new("sh")
        .args([
            "-c",
            "zcat /proc/config.gz 2>/dev/null | grep -E 'NET_SCH_(PRIO|NETEM)\\b'",
        ])
        .output();
    out.map(|o| {
        String::from_utf8_lossy(&o.stdout)
            .trim()
            .replace('\n', ", ")
    })
    .unwrap_or_default()
}

#[test]
fn the_generated_commands_delay_and_cut_the_round_trip_between_two_containers() {
    const TEST: &str = "the_generated_commands_delay_and_cut_the_round_trip_between_two_containers";
    let Some(tools) = docker_or_skip(TEST) else {
        return;
    };
    let Some(tc) = host_tc() else {
        assert!(
            std::env::var_os("HARNESS_REQUIRE_DOCKER").is_none(),
            "HARNESS_REQUIRE_DOCKER is set but this host has no tc to copy into the test image: install iproute2"
        );
        eprintln!(
            "SKIPPED {TEST}: no tc on this host to copy into the test image (install iproute2)"
        );
        return;
    };
    let manifest = built_workloads(&tools, &["flagsvc", "loadgen"]);

    // The image: tc, its libraries and loader at their paths, flagsvc and loadgen; root (tc
    // needs NET_ADMIN, which the containers get).
    let context = tempfile::tempdir().unwrap();
    copy_at_same_path(context.path(), &tc);
    for library in shared_libraries(&tools, &tc) {
        copy_at_same_path(context.path(), &library);
    }
    for workload in ["flagsvc", "loadgen"] {
        let binary = &manifest.image(workload).unwrap().binary;
        std::fs::copy(binary, context.path().join(workload)).unwrap();
    }
    std::fs::write(
        context.path().join("Dockerfile"),
        "FROM scratch\nCOPY . /\nENTRYPOINT [\"/flagsvc\"]\n",
    )
    .unwrap();
    let id = unique_id();
    let image = format!("harness-test/netem:{id}");
    // Declared before the containers and the image, so removed after them.
    let network = Network::create(&tools, &format!("harness-test-{id}"), "netem", true);
    let cluster_name = format!("harness-netem-{id}");
    let (a, b) = (
        format!("{cluster_name}-worker"),
        format!("{cluster_name}-worker2"),
    );
    let _cleanup = Cleanup {
        tools: tools.clone(),
        containers: vec![a.clone(), b.clone()],
        image: image.clone(),
    };
    tools
        .output(
            &Cmd::new("docker")
                .args(["build", "--tag", &image])
                .arg(context.path().display().to_string())
                .timeout(Duration::from_secs(300)),
        )
        .unwrap();
    for name in [&a, &b] {
        tools
            .output(&Cmd::new("docker").args([
                "run",
                "-d",
                "--name",
                name,
                "--network",
                &network.name,
                "--cap-add",
                "NET_ADMIN",
                "--env",
                "POD_NAME=pod",
                &image,
                "--listen",
                "0.0.0.0:8080",
                "--service-time",
                "fixed:1ms",
            ]))
            .unwrap();
        wait_listening(&tools, name);
    }

    // The implementation's pieces: addresses by docker inspect, the commands, tc by docker exec.
    let cluster = Cluster::new(&cluster_name, None, tools.clone()).unwrap();
    let addresses = cluster.node_addresses(&[a.clone(), b.clone()]).unwrap();
    let (ip_a, ip_b) = (addresses[&a][0], addresses[&b][0]);
    let members = [
        Member::new(&a, "a", &[ip_a], &[]),
        Member::new(&b, "b", &[ip_b], &[]),
    ];
    let zones = ["a".to_owned(), "b".to_owned()];
    let mut net = ZoneNet::new(Layout::new(&zones).unwrap());
    let change = |fault| ZoneNetworkChange {
        from: "a".into(),
        to: ZoneScope::Zone("b".into()),
        fault,
    };
    let slow = net.apply(
        &change(ZoneFault::Degrade {
            delay: DELAY,
            jitter: Duration::ZERO,
            loss_ppm: 0,
        }),
        &members,
    );
    let target = ip_b.to_string();

    let before = p50(&load(&tools, &a, &target, "5s"));
    match run_all(&cluster, &slow) {
        Ok(()) => {}
        Err(LifecycleError::Exec(ExecError::Failed { stderr, .. }))
            if stderr.contains("Specified qdisc kind is unknown") =>
        {
            // No prio or netem in this kernel: every command must still have been parsed by tc
            // (the kernel refuses with exit status 2; a usage error is 1).
            let partition = ZoneNet::new(Layout::new(&zones).unwrap())
                .apply(&change(ZoneFault::Partition), &members);
            for node in slow.iter().chain(&partition) {
                for args in &node.commands {
                    if let Err(LifecycleError::Exec(ExecError::Failed { status, stderr, .. })) =
                        cluster.tc(&node.node, args)
                    {
                        assert_ne!(
                            status, "exit status 1",
                            "tc did not parse {args:?}: {stderr}"
                        );
                    }
                }
            }
            cluster.tc_clean(&a).unwrap();
            cluster.tc_clean(&b).unwrap();
            let why = format!(
                "this kernel has no prio or netem qdisc ({stderr}{}); the commands were parsed by tc, the delay not measured",
                match kernel_config() {
                    c if c.is_empty() => String::new(),
                    c => format!("; /proc/config.gz: {c}"),
                }
            )
            .replace('\n', " ");
            assert!(
                std::env::var_os("HARNESS_REQUIRE_NETEM").is_none(),
                "HARNESS_REQUIRE_NETEM is set but {why}"
            );
            eprintln!("SKIPPED {TEST}: {why}");
            return;
        }
        Err(e) => panic!("{e}"),
    }
    let slowed = p50(&load(&tools, &a, &target, "5s"));
    let two_delays = 2.0 * DELAY.as_secs_f64() * 1000.0;
    // The histogram's buckets may round a value down by a fraction of a percent.
    assert!(
        slowed >= two_delays * 0.99 && slowed - before >= two_delays * 0.9,
        "p50 {before:.1} ms before, {slowed:.1} ms with {DELAY:?} each way"
    );

    // clear: the commands ZoneNet gives back.
    let cleared = net.apply(&change(ZoneFault::Clear), &members);
    run_all(&cluster, &cleared).unwrap();
    let after = p50(&load(&tools, &a, &target, "5s"));
    assert!(
        after < DELAY.as_secs_f64() * 1000.0,
        "p50 {after:.1} ms after the clear (before: {before:.1} ms)"
    );

    // A partition: nothing answers, every request times out; teardown's removal restores it,
    // and a second removal finds nothing and succeeds.
    let cut = net.apply(&change(ZoneFault::Partition), &members);
    run_all(&cluster, &cut).unwrap();
    let report = load(&tools, &a, &target, "500ms");
    let attempted = report["attempted"].as_u64().unwrap();
    let failed: u64 = report["transport_errors"]
        .as_object()
        .unwrap()
        .values()
        .map(|v| v.as_u64().unwrap())
        .sum();
    assert!(
        attempted > 0 && failed == attempted,
        "a partition lets nothing through: {report:#}"
    );
    for node in [&a, &b] {
        cluster.tc_clean(node).unwrap();
        cluster.tc_clean(node).unwrap();
    }
    let healed = p50(&load(&tools, &a, &target, "5s"));
    assert!(healed < DELAY.as_secs_f64() * 1000.0, "p50 {healed:.1} ms");
}
