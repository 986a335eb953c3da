//! Connection workers: each owns one [`Slot`] and sends one request at a time, paced by the
//! open-loop scheduler or back-to-back (closed loop, `--rate max`).

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::client::{Exchange, Slot};
use crate::config::{ConnectionModel, Target};
use crate::recorder::{Outcome, Recorder};
use crate::scheduler::OpenLoop;

/// What every worker of a run shares.
pub(crate) struct Shared {
    pub addr: SocketAddr,
    pub target: Target,
    pub model: ConnectionModel,
    pub timeout: Duration,
    pub rec: Arc<Recorder>,
    pub stop: CancellationToken,
}

impl Shared {
    async fn warm_up(&self, slot: &mut Slot) {
        tokio::select! {
            () = slot.warm_up(self.addr, self.timeout) => {}
            () = self.stop.cancelled() => {}
        }
    }

    /// Sends one request intended at `intended`, starting at `sent`, and records its outcome.
    /// Latency counts from the intended time, or from the actual send if that was earlier
    /// (timer slack).
    async fn send(&self, slot: &mut Slot, intended: Instant, sent: Instant) {
        self.rec.metrics().attempted.inc();
        let send_delay = sent.saturating_duration_since(intended);
        let result = slot
            .execute(self.addr, &self.target, sent, self.timeout)
            .await;
        let latency = Instant::now().saturating_duration_since(intended.min(sent));
        let outcome = match result {
            Exchange::Response { status, pod, bytes } => Outcome::Response {
                status,
                pod,
                latency,
                bytes,
            },
            Exchange::Failure {
                kind,
                conn_pod,
                bytes,
            } => Outcome::Transport {
                kind,
                conn_pod,
                bytes,
            },
        };
        self.rec.record(intended, send_delay, outcome);
    }
}

/// Open loop: worker `id` sends each arrival handed to it; latency from its intended time.
pub(crate) async fn open_loop(shared: Arc<Shared>, sched: Arc<OpenLoop>, id: usize) {
    let mut slot = Slot::new(shared.model, &shared.target);
    shared.warm_up(&mut slot).await;
    while let Some(intended) = sched.next(id, &shared.rec).await {
        shared.send(&mut slot, intended, Instant::now()).await;
        sched.complete(&shared.rec);
    }
}

/// Closed loop: send back-to-back until `end` or the stop; latency from the actual send.
pub(crate) async fn closed_loop(shared: Arc<Shared>, end: Instant) {
    let mut slot = Slot::new(shared.model, &shared.target);
    shared.warm_up(&mut slot).await;
    let in_flight = &shared.rec.metrics().in_flight;
    loop {
        let now = Instant::now();
        if now >= end || shared.stop.is_cancelled() {
            break;
        }
        in_flight.inc();
        shared.send(&mut slot, now, now).await;
        in_flight.dec();
    }
}
