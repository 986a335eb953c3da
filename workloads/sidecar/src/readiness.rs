//! Readiness of the sidecar's pod: `/readyz` fails while the server drains (after SIGTERM) and
//! while the admission queue has stayed above `--readiness-queue-above` for at least
//! `--readiness-for`; it recovers as soon as the queue falls back to or below the threshold.
//! Failing readiness takes the pod out of the Service's endpoints: the mechanism of the
//! hot-podding and autoscaler incidents.

use std::time::Duration;

use workload_common::serve::Lifecycle;

use crate::queue::QueueHandle;

/// Why the pod is (not) ready.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadyState {
    Ready,
    /// Shutdown signal received; still serving during the drain delay.
    Draining,
    /// The admission queue stayed above the threshold for the configured period.
    Saturated,
}

impl ReadyState {
    /// Body of the `/readyz` answer.
    pub fn describe(self) -> &'static str {
        match self {
            Self::Ready => "ready\n",
            Self::Draining => "draining\n",
            Self::Saturated => "saturated: admission queue above threshold\n",
        }
    }
}

/// Computes [`ReadyState`] from the lifecycle and the queue.
#[derive(Debug, Clone)]
pub struct Readiness {
    lifecycle: Lifecycle,
    queue: QueueHandle,
    /// How long the queue must stay above its threshold; `None` = readiness on saturation off.
    saturated_after: Option<Duration>,
}

impl Readiness {
    pub fn new(
        lifecycle: Lifecycle,
        queue: QueueHandle,
        saturated_after: Option<Duration>,
    ) -> Self {
        Self {
            lifecycle,
            queue,
            saturated_after,
        }
    }

    pub fn state(&self) -> ReadyState {
        if self.lifecycle.is_draining() {
            return ReadyState::Draining;
        }
        match (self.saturated_after, self.queue.saturated_for()) {
            (Some(after), Some(above_for)) if above_for >= after => ReadyState::Saturated,
            _ => ReadyState::Ready,
        }
    }

    pub fn is_ready(&self) -> bool {
        self.state() == ReadyState::Ready
    }
}
