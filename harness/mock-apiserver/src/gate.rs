//! Answers held back until a whole group of requests has arrived ([`Gate`]): a test can tell
//! requests sent together from requests sent one after the other without measuring time — one
//! after the other, the first of a group waits for the rest, which are not sent until it is
//! answered, so it is answered only when the gate gives up (a 504).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use crate::{Reply, status};

/// Counts the requests it passes, in groups of `size` in arrival order, and holds each one's
/// answer until its group is complete, for at most `hold`.
pub struct Gate {
    size: usize,
    hold: Duration,
    next: AtomicUsize,
    arrived: tokio::sync::watch::Sender<usize>,
}

impl Gate {
    /// A gate for groups of `size` (at least 1) requests, each held for at most `hold`.
    pub fn new(size: usize, hold: Duration) -> Self {
        Gate {
            size: size.max(1),
            hold,
            next: AtomicUsize::new(0),
            arrived: tokio::sync::watch::Sender::new(0),
        }
    }

    /// `reply`, once every request of this one's group has arrived; a 504 `Status` naming how
    /// many had when `hold` ran out first.
    pub fn pass(&self, reply: Reply) -> Reply {
        let index = self.next.fetch_add(1, Ordering::SeqCst);
        self.arrived.send_modify(|n| *n += 1);
        let complete = (index / self.size + 1) * self.size;
        let mut arrived = self.arrived.subscribe();
        let hold = self.hold;
        Reply::Deferred(Box::pin(async move {
            let complete_in_time = tokio::time::timeout(hold, arrived.wait_for(|&n| n >= complete))
                .await
                .is_ok_and(|group| group.is_ok());
            if complete_in_time {
                return reply;
            }
            let seen = *arrived.borrow();
            status(
                504,
                "Timeout",
                &format!(
                    "gate: {seen} of the {complete} requests up to this one's group arrived within {hold:?}"
                ),
            )
        }))
    }

    /// How many requests it has passed.
    pub fn passed(&self) -> usize {
        self.next.load(Ordering::SeqCst)
    }
}
