//! harness-core: the scenario model, the Kubernetes control-plane models, measurements,
//! the engine and the report model. No process, network or Kubernetes-client code lives here.

pub mod report;
pub mod measure;
pub mod k8s;
pub mod control_plane;
pub mod scenario;
pub mod engine;
