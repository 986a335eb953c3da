//! harness-core: the scenario model, the Kubernetes control-plane models, measurements,
//! the engine and the report model. No process, network or Kubernetes-client code lives here.

pub mod control_plane;
pub mod engine;
pub mod measure;
pub mod report;
pub mod scenario;
