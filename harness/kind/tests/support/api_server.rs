//! The scripted Kubernetes API server, shared with other crates' tests as `mock-apiserver`.

pub use mock_apiserver::*;
