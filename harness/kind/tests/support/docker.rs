//! What the tests with real containers share: the skip where no Docker engine answers (a
//! failure under `HARNESS_REQUIRE_DOCKER=1`), the workload images built for the engine's
//! architecture, a name unique to the test process, and a Docker network removed when dropped.

use std::path::PathBuf;
use std::time::{SystemTime, UNIX_EPOCH};

use harness_kind::exec::{Cmd, Toolbox};
use harness_kind::images::{self, BuildOptions, Manifest};
use harness_kind::tools;

/// The tools with a Docker engine that answers; `None` (after saying that `test` is skipped)
/// where none does, unless `HARNESS_REQUIRE_DOCKER` is set, which makes it a failure.
pub fn docker_or_skip(test: &str) -> Option<Toolbox> {
    let tools = Toolbox::new();
    if let Err(e) = tools::check_docker(&tools) {
        assert!(
            std::env::var_os("HARNESS_REQUIRE_DOCKER").is_none(),
            "HARNESS_REQUIRE_DOCKER is set but Docker does not answer: {e}"
        );
        eprintln!("SKIPPED {test}: {e}");
        return None;
    }
    Some(tools)
}

/// The workload images, built from this workspace for the engine's architecture.
pub fn built_images(tools: &Toolbox) -> Manifest {
    built_workloads(tools, &[])
}

/// The images of `only` (every workload when empty), built from this workspace for the
/// engine's architecture.
pub fn built_workloads(tools: &Toolbox, only: &[&str]) -> Manifest {
    let workspace = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap();
    let arch = tools.output(&images::docker_arch()).unwrap().stdout;
    let target = images::rust_target_for_docker_arch(&arch).unwrap();
    let mut options = BuildOptions::new(workspace, target);
    if !only.is_empty() {
        options.workloads.retain(|w| only.contains(&w.name));
    }
    let built = images::build_images(tools, &options).unwrap_or_else(|e| panic!("{e}"));
    Manifest::new(target, built)
}

/// `PID-NANOS`: a suffix for container and network names no other test run uses at once.
pub fn unique_id() -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    format!("{}-{nanos}", std::process::id())
}

/// A Docker network removed when dropped (after the containers on it).
pub struct Network {
    pub name: String,
    tools: Toolbox,
}

impl Network {
    /// `docker network create` of `name` with the label `io.harness.test=<label>`;
    /// `internal`: no route out of it.
    pub fn create(tools: &Toolbox, name: &str, label: &str, internal: bool) -> Self {
        let label = format!("io.harness.test={label}");
        let mut args = vec!["network", "create"];
        if internal {
            args.push("--internal");
        }
        args.extend(["--label", &label, name]);
        tools.output(&Cmd::new("docker").args(args)).unwrap();
        Self {
            name: name.to_owned(),
            tools: tools.clone(),
        }
    }
}

impl Drop for Network {
    fn drop(&mut self) {
        let _ = self
            .tools
            .output(&Cmd::new("docker").args(["network", "rm", &self.name]));
    }
}
