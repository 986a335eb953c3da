//! The verdict of a run, from its data: each expectation evaluated over its window
//! (`evaluate`), the summary with totals, per-pod views on every side, series, removals and the
//! ingress view (`summarize` and the `*_views`), the sentences that explain it (`explain`), and
//! the reports rebuilt from a stored run (`rebuild`).

pub mod evaluate;
pub mod explain;
pub mod failover;
pub mod ingress_view;
pub mod pod_views;
pub mod rebuild;
pub mod removals;
pub mod series_views;
pub mod summarize;
