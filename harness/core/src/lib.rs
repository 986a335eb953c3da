//! harness-core: the scenario model and its validation, the modelled cluster of a scenario
//! (`control_plane`, built on the ports in `kube_model`), the engine and the [`engine::Target`]
//! trait, measurements, the report model and the workloads' command lines for a scenario; and
//! for tests, here and in the other crates, the scenario text they build on (`testing`). No
//! process, network or Kubernetes-client code lives here.

pub mod audit;
pub mod clock;
pub mod compare;
pub mod control_plane;
pub mod engine;
pub mod ingress;
pub mod measure;
pub mod plan;
pub mod report;
pub mod scenario;
pub mod target_kit;
pub mod testing;
pub mod text;
pub mod verdict;
pub mod workload_args;
