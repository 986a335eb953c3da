//! One run from start to report: resolve the targets, start the metrics endpoint, the request
//! workers (open or closed loop) and the SSE slots, stop issuing at the duration or on the stop
//! future, wait for every outstanding request to get its outcome, and assemble the report.

use std::future::Future;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use tokio::net::TcpListener;
use tokio::task::JoinSet;
use tokio::time::{Instant, sleep_until};
use tokio_util::sync::CancellationToken;

use crate::assemble::{RunMeta, assemble, report_config};
use crate::config::{RateSpec, RunConfig, Target, TargetKind};
use crate::error::LoadgenError;
use crate::metrics::{Metrics, serve_metrics};
use crate::recorder::Recorder;
use crate::report::Report;
use crate::scheduler::OpenLoop;
use crate::sse::{SseStats, StreamSlot};
use crate::worker::{self, Shared};

/// Runs the load described by `config` until its duration ends or `stop` resolves (then the
/// report is `partial`). See the crate documentation.
pub async fn run(
    config: RunConfig,
    stop: impl Future<Output = ()>,
) -> Result<Report, LoadgenError> {
    run_with_metrics(config, Metrics::new(), stop).await
}

/// Like [`run`], counting into `metrics` (which the caller can read or serve while it runs).
pub async fn run_with_metrics(
    config: RunConfig,
    metrics: Metrics,
    stop: impl Future<Output = ()>,
) -> Result<Report, LoadgenError> {
    config.validate()?;
    let profile = config.profile();
    let requests_on = match &profile {
        Some(p) => p.total() > 0,
        None => config.rate == RateSpec::Max,
    };
    let target = Target::new(
        &config.url,
        &config.headers,
        TargetKind::Requests(config.connection_model),
    )?;
    let addr = if requests_on {
        Some(target.resolve().await?)
    } else {
        None
    };
    let sse = if config.sse_streams > 0 {
        let t = Target::new(
            &config.effective_sse_url(),
            &config.headers,
            TargetKind::Stream,
        )?;
        let a = t.resolve().await?;
        Some((Arc::new(t), a))
    } else {
        None
    };

    let metrics_stop = CancellationToken::new();
    let metrics_task = match config.metrics_listen {
        Some(listen) => {
            let listener =
                TcpListener::bind(listen)
                    .await
                    .map_err(|source| LoadgenError::MetricsListen {
                        addr: listen,
                        source,
                    })?;
            let bound = listener.local_addr().unwrap_or(listen);
            tracing::info!(addr = %bound, "serving /metrics");
            if config.announce_metrics {
                println!(
                    "{}",
                    workload_contract::listening::line(&[("metrics", bound)])
                );
            }
            Some(tokio::spawn(serve_metrics(
                listener,
                metrics.clone(),
                metrics_stop.clone().cancelled_owned(),
            )))
        }
        None => None,
    };

    let stop_token = CancellationToken::new();
    let start = Instant::now();
    let started_at_unix_ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
    let end = start + config.duration;
    let rec = Arc::new(Recorder::new(start, metrics.clone()));
    let sse_stats = Arc::new(SseStats::new(metrics.clone(), config.sse_streams));
    let mut tasks = JoinSet::new();

    let mut sched = None;
    if let Some(addr) = addr {
        let shared = Arc::new(Shared {
            addr,
            target,
            model: config.connection_model,
            timeout: config.timeout,
            rec: rec.clone(),
            stop: stop_token.clone(),
        });
        match profile {
            Some(profile) => {
                let s = Arc::new(OpenLoop::new(
                    profile,
                    start,
                    config.max_in_flight,
                    config.connections,
                    stop_token.clone(),
                ));
                let (d, r) = (s.clone(), rec.clone());
                tasks.spawn(async move { d.dispatch(&r).await });
                for id in 0..config.connections {
                    tasks.spawn(worker::open_loop(shared.clone(), s.clone(), id));
                }
                sched = Some(s);
            }
            None => {
                for _ in 0..config.connections {
                    tasks.spawn(worker::closed_loop(shared.clone(), end));
                }
            }
        }
    }
    if let Some((target, addr)) = sse {
        for index in 0..config.sse_streams {
            let slot = StreamSlot {
                index,
                addr,
                target: target.clone(),
                timeout: config.timeout,
                stop: stop_token.clone(),
                stats: sse_stats.clone(),
                rec: rec.clone(),
                seed: config.seed,
            };
            tasks.spawn(slot.run());
        }
    }

    tokio::pin!(stop);
    let partial = tokio::select! {
        () = &mut stop => Instant::now() < end,
        () = sleep_until(end) => false,
    };
    let issue_end = if partial {
        Instant::now().min(end)
    } else {
        end
    };
    if partial {
        tracing::info!("stopping early: waiting for outstanding requests");
    }
    if let Some(s) = &sched {
        s.stop_issuing(issue_end, &rec);
    }
    stop_token.cancel();
    while let Some(joined) = tasks.join_next().await {
        joined.map_err(|e| LoadgenError::Task(e.to_string()))?;
    }
    let drain = Instant::now().saturating_duration_since(issue_end);
    metrics_stop.cancel();
    if let Some(task) = metrics_task {
        let _ = task.await;
    }

    let meta = RunMeta {
        started_at_unix_ms,
        duration: issue_end - start,
        drain,
        partial,
    };
    Ok(assemble(
        rec.finish(),
        sse_stats.finish(),
        meta,
        report_config(&config),
    ))
}
