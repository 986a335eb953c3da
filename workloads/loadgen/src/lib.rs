//! `loadgen`: the harness's load generator, usable on its own like wrk2 or oha.
//!
//! - **Open loop** (`--rate`, ramps, step schedules): request *i* has an intended send time and
//!   its latency is measured from that time, so a stalled server shows up in the percentiles
//!   (coordinated omission is not hidden, as in wrk2). Requests that find every connection busy
//!   wait in FIFO order; beyond `max_in_flight` outstanding, arrivals are counted as `dropped`.
//!   One dispatcher wakes once per millisecond tick and hands the arrivals due by the next tick
//!   to free connection workers (no task or timer per request), which keeps up at tens of
//!   thousands of rps on two cores.
//! - **Closed loop** (`--rate max`): each connection sends back-to-back.
//! - **Connection model**: keep-alive (N connections reused; kube-proxy picks a backend per
//!   connection) or a new TCP connection per request. Keep-alive requests take a fast path: the
//!   request is encoded once and each response read with `httparse` into a buffer reused for
//!   the connection's life (a head byte-identical to the last one is not parsed again), inside
//!   the worker's own task (no allocation, channel or timer registration per request);
//!   per-request connections and SSE streams go through hyper.
//! - **Attribution**: responses, status codes and latency per pod from the `x-pod` header;
//!   transport errors by kind (`connect_refused`, `reset`, `timeout`, `other`).
//! - **SSE**: K long-lived event streams alongside (or instead of) the request load.
//! - **Metrics**: source-side Prometheus counters while running ([`Metrics`]).
//!
//! The result is a [`Report`] (JSON schema `loadgen-report/v1`, see `REPORT.md`); reports of
//! generators that ran together merge exactly with [`merge_reports`].
//!
//! ```no_run
//! # async fn example() -> Result<(), loadgen::LoadgenError> {
//! let mut config = loadgen::RunConfig::new("http://127.0.0.1:8080/".parse().unwrap());
//! config.rate = loadgen::RateSpec::Constant(500.0);
//! let report = loadgen::run(config, std::future::pending()).await?;
//! assert_eq!(report.attempted, report.total_responses() + report.total_transport_errors());
//! # Ok(()) }
//! ```

mod assemble;
pub mod cli;
mod client;
pub mod config;
mod counting;
mod error;
mod error_kind;
mod keepalive;
mod merge;
pub mod metrics;
pub mod profile;
mod recorder;
pub mod report;
mod runner;
mod scheduler;
mod sse;
pub mod text;
mod wire;
mod worker;

pub use config::{ConnectionModel, Origin, RateSpec, RunConfig};
pub use error::LoadgenError;
pub use error_kind::ErrorKind;
pub use merge::{merge_reports, try_merge_reports};
pub use metrics::{Metrics, serve_metrics};
pub use recorder::{OTHER_PODS, UNKNOWN_POD};
pub use report::{FromHistogram, Report, ReportExt, SCHEMA};
pub use runner::{run, run_with_metrics};
