//! What a whole kind run through the engine needs in a test: the target's options with the
//! recording fakes, the run context (run id `r1`), the run itself without progress output, the
//! API calls the target made with the watchers' reads left out, and the objects it applied in
//! order.

use std::path::{Path, PathBuf};

use harness_core::clock::TimeScale;
use harness_core::engine::{self, EngineError, RunContext, RunOptions, RunOutcome, Silent};
use harness_core::scenario::model::Scenario;
use harness_kind::driver::{ClusterMode, KindOptions, KindTarget};
use tokio_util::sync::CancellationToken;

use super::api_server::ApiServer;
use super::fakes::FakeTools;
use super::files::repo;

/// The target's options on 8 host CPUs with `fakes` alone as its tools and the image list
/// `images` (a path in the repository).
pub fn options(
    fakes: &FakeTools,
    mode: ClusterMode,
    kubeconfig: PathBuf,
    images: &str,
) -> KindOptions {
    KindOptions {
        mode,
        kubeconfig: Some(kubeconfig),
        host_cpus: 8,
        images: repo(images),
        tools: fakes.toolbox_alone(),
        may_touch_nodes: false,
        check_access: false,
    }
}

/// Run `r1` with seed 1 at `time_scale`, writing below `out/run`.
pub fn run_context(out: &Path, time_scale: TimeScale) -> RunContext {
    RunContext {
        run_id: "r1".into(),
        out_dir: out.join("run"),
        seed: 1,
        time_scale,
    }
}

/// The whole run, not kept, not cancelled, with no progress output.
pub async fn run_silently(
    target: &mut KindTarget,
    scenario: &Scenario,
    ctx: &RunContext,
) -> Result<RunOutcome, EngineError> {
    engine::run(
        target,
        scenario,
        ctx,
        &RunOptions { keep: false },
        CancellationToken::new(),
        &Silent,
    )
    .await
}

/// The API calls the target made, as `METHOD path` in order: the GETs of the watched
/// collections (Nodes, EndpointSlices, Events, Pods) and those `also_left_out` names left out.
pub fn calls_made(server: &ApiServer, also_left_out: impl Fn(&str) -> bool) -> Vec<String> {
    const WATCHED: [&str; 4] = ["/nodes", "/endpointslices", "/events", "/pods"];
    server
        .calls()
        .into_iter()
        .filter(|c| {
            let path = c.path();
            let read = WATCHED.iter().any(|w| path.ends_with(w)) || also_left_out(path);
            !(c.method == "GET" && read)
        })
        .map(|c| format!("{} {}", c.method, c.path()))
        .collect()
}

/// The paths of the objects the target applied (PATCHed), in order.
pub fn applied(server: &ApiServer) -> Vec<String> {
    server
        .calls()
        .iter()
        .filter(|c| c.method == "PATCH")
        .map(|c| c.path().to_owned())
        .collect()
}

/// Where in `applied` the object whose path ends with `suffix` was applied; panics naming it
/// (and every path) when it was not.
pub fn applied_at(applied: &[String], suffix: &str) -> usize {
    applied
        .iter()
        .position(|p| p.ends_with(suffix))
        .unwrap_or_else(|| panic!("no PATCH of {suffix}: {applied:#?}"))
}
