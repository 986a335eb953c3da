//! Open-loop pacing with one timer per tick, not per request.
//!
//! Arrivals are numbered 0, 1, 2, …; arrival *i* is intended at `start + profile.offset(i)`.
//! One task, the *dispatcher*, wakes once per tick (tokio's timer resolution, 1 ms) while
//! arrivals are close, or at the next arrival when they are far apart, and hands every arrival
//! due by the next tick (up to [`LEAD`] ahead) to a free connection worker — the one free longest
//! first, so requests spread over the connections as before — waking it; a worker has no timer of
//! its own. When every worker is busy, the arrival waits in a FIFO that workers drain before
//! waiting for a new one. Either way the request's latency counts from its intended time, or from
//! its actual send when it left up to [`LEAD`] early (coordinated omission is not hidden either
//! way).
//!
//! Admission happens when the arrival is handed out (at most [`LEAD`] before its intended time):
//! at most `max_in_flight` requests may be outstanding (handed out, waiting in the FIFO or being
//! sent); an arrival beyond that is counted as dropped (tail drop), never silently skipped. When
//! issuing stops (end of the duration or stop signal) nothing new goes on the wire: requests still
//! waiting for a connection, or handed to a worker that has not sent them yet, are counted as
//! dropped if they were intended before the stop (and are not part of the run otherwise), and
//! only those already being sent finish (each bounded by its timeout). So every arrival intended
//! before the stop is attempted or dropped, as is one handed out (at most [`LEAD`] early) before
//! the stop came; `attempted` = responses + transport errors either way.

use std::collections::VecDeque;
use std::sync::{Mutex, MutexGuard};
use std::task::{Poll, Waker};
use std::time::Duration;

use tokio::time::{Instant, sleep_until};
use tokio_util::sync::CancellationToken;

use crate::profile::RateProfile;
use crate::recorder::Recorder;

/// How far ahead of its intended time an arrival is handed out: tokio rounds timers up to the
/// next millisecond and the driver's wait adds up to another, so the next tick comes 1–2 ms
/// later; handing out what falls due before it keeps requests from leaving late (seen on
/// loopback as a 1.4 ms p50 for a 0.1 ms server when they waited for their tick). A request
/// that leaves early measures its latency from its actual send, which is never less than from
/// its intended time.
pub(crate) const LEAD: Duration = Duration::from_millis(2);

/// One connection worker as the dispatcher sees it.
#[derive(Default)]
struct WorkerSlot {
    /// The intended time of the arrival handed to it and not yet taken.
    handed: Option<Instant>,
    /// In the free queue.
    free: bool,
    waker: Option<Waker>,
}

struct State {
    /// Next arrival not handed out (or admitted) yet.
    next: u64,
    /// Intended times of admitted arrivals waiting for a free connection (oldest first).
    waiting: VecDeque<Instant>,
    /// Admitted and not completed: handed out, waiting, or sending.
    outstanding: u64,
    /// Set when issuing stops: arrivals intended at or after it are not part of the run.
    issue_end: Option<Instant>,
    /// Every arrival was handed out or admitted, or issuing stopped: free workers are done.
    finished: bool,
    /// Free workers, longest free first.
    free: VecDeque<usize>,
    workers: Vec<WorkerSlot>,
}

/// Shared pacing state of one open-loop run.
pub(crate) struct OpenLoop {
    profile: RateProfile,
    total: u64,
    start: Instant,
    max_outstanding: u64,
    stop: CancellationToken,
    state: Mutex<State>,
}

/// What a worker found when it asked for work.
enum Take {
    Send(Instant),
    /// Handed out before issuing stopped but not sent: dropped if intended before the stop.
    Unsent(Instant, bool),
    Done,
    Wait,
}

impl OpenLoop {
    pub(crate) fn new(
        profile: RateProfile,
        start: Instant,
        max_outstanding: u64,
        workers: usize,
        stop: CancellationToken,
    ) -> Self {
        let total = profile.total();
        Self {
            total,
            profile,
            start,
            max_outstanding,
            stop,
            state: Mutex::new(State {
                next: 0,
                waiting: VecDeque::new(),
                outstanding: 0,
                issue_end: None,
                finished: total == 0,
                free: VecDeque::with_capacity(workers),
                workers: (0..workers).map(|_| WorkerSlot::default()).collect(),
            }),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn at(&self, i: u64) -> Instant {
        self.start + self.profile.offset(i)
    }

    fn take(&self, s: &mut State, worker: usize, waker: &Waker) -> Take {
        if let Some(at) = s.workers[worker].handed.take() {
            return match s.issue_end {
                Some(end) => {
                    s.outstanding -= 1;
                    Take::Unsent(at, at < end)
                }
                None => Take::Send(at),
            };
        }
        if let Some(at) = s.waiting.pop_front() {
            return Take::Send(at); // waiting is emptied when issuing stops
        }
        if s.finished {
            return Take::Done;
        }
        let slot = &mut s.workers[worker];
        if !slot.free {
            slot.free = true;
            s.free.push_back(worker);
        }
        match &mut slot.waker {
            Some(w) if w.will_wake(waker) => {}
            w => *w = Some(waker.clone()),
        }
        Take::Wait
    }

    /// For free worker `worker`: the intended time of the next request to send (admitted and
    /// counted outstanding), or `None` when the run has nothing more for it.
    pub(crate) async fn next(&self, worker: usize, rec: &Recorder) -> Option<Instant> {
        std::future::poll_fn(|cx| {
            loop {
                let taken = self.take(&mut self.lock(), worker, cx.waker());
                match taken {
                    Take::Send(at) => return Poll::Ready(Some(at)),
                    Take::Unsent(at, dropped) => {
                        rec.metrics().in_flight.dec();
                        if dropped {
                            rec.dropped(at);
                        }
                    }
                    Take::Done => return Poll::Ready(None),
                    Take::Wait => return Poll::Pending,
                }
            }
        })
        .await
    }

    /// A request returned by [`OpenLoop::next`] has its outcome.
    pub(crate) fn complete(&self, rec: &Recorder) {
        self.lock().outstanding -= 1;
        rec.metrics().in_flight.dec();
    }

    /// Hands out arrivals, a tick's worth per wake-up, until every arrival is handed out or
    /// issuing stops.
    pub(crate) async fn dispatch(&self, rec: &Recorder) {
        let stop = self.stop.cancelled();
        let sleep = sleep_until(Instant::now());
        tokio::pin!(stop, sleep);
        let mut wake = Vec::new();
        let mut dropped = Vec::new();
        loop {
            let now = Instant::now();
            let next_due = self.hand_out(now + LEAD, &mut wake, &mut dropped, rec);
            for w in wake.drain(..) {
                w.wake();
            }
            for at in dropped.drain(..) {
                rec.dropped(at);
            }
            let Some(due) = next_due else { return };
            // Later than `now` (the next arrival is beyond `now + LEAD`); tokio rounds it up to
            // its next millisecond, so close arrivals make one wake-up per millisecond.
            sleep.as_mut().reset(due.checked_sub(LEAD).unwrap_or(due));
            tokio::select! {
                () = &mut sleep => {}
                () = &mut stop => return,
            }
        }
    }

    /// Hands out (or admits, or drops) every arrival intended by `horizon`; collects the
    /// wakers of the workers that got one (and of every free worker when nothing is left).
    /// Returns when the next arrival is intended, if any.
    fn hand_out(
        &self,
        horizon: Instant,
        wake: &mut Vec<Waker>,
        dropped: &mut Vec<Instant>,
        rec: &Recorder,
    ) -> Option<Instant> {
        let mut admitted = 0;
        let mut s = self.lock();
        let s = &mut *s;
        let mut next_due = None;
        while !s.finished {
            if s.next >= self.total {
                s.finished = true;
                break;
            }
            let at = self.at(s.next);
            if at > horizon {
                next_due = Some(at);
                break;
            }
            if s.outstanding >= self.max_outstanding {
                dropped.push(at);
            } else {
                s.outstanding += 1;
                admitted += 1;
                match s.free.pop_front() {
                    Some(w) => {
                        let slot = &mut s.workers[w];
                        slot.free = false;
                        slot.handed = Some(at);
                        wake.extend(slot.waker.take());
                    }
                    None => s.waiting.push_back(at),
                }
            }
            s.next += 1;
        }
        if s.finished {
            Self::release_free(s, wake);
        }
        rec.metrics().in_flight.inc_by(admitted);
        next_due
    }

    /// Nothing more to hand out: every free worker is woken to find that out.
    fn release_free(s: &mut State, wake: &mut Vec<Waker>) {
        for w in s.free.drain(..) {
            let slot = &mut s.workers[w];
            slot.free = false;
            wake.extend(slot.waker.take());
        }
    }

    /// Stops issuing at `end`: requests waiting for a connection and arrivals due before `end`
    /// but not handed out are dropped (never sent); later arrivals are not part of the run.
    pub(crate) fn stop_issuing(&self, end: Instant, rec: &Recorder) {
        let mut dropped = Vec::new();
        let mut wake = Vec::new();
        {
            let mut s = self.lock();
            let s = &mut *s;
            if s.issue_end.is_some() {
                return;
            }
            s.issue_end = Some(end);
            s.finished = true;
            let waiting = std::mem::take(&mut s.waiting);
            s.outstanding -= waiting.len() as u64;
            rec.metrics().in_flight.dec_by(waiting.len() as i64);
            dropped.extend(waiting.into_iter().filter(|&at| at < end));
            while s.next < self.total {
                let at = self.at(s.next);
                if at >= end {
                    break;
                }
                dropped.push(at);
                s.next += 1;
            }
            Self::release_free(s, &mut wake);
        }
        for w in wake {
            w.wake();
        }
        for at in dropped {
            rec.dropped(at);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::Metrics;

    /// Ten arrivals, one per millisecond from `start`.
    fn ten(start: Instant, max_outstanding: u64, workers: usize) -> OpenLoop {
        let profile = RateProfile::constant(1000.0, Duration::from_millis(10));
        OpenLoop::new(
            profile,
            start,
            max_outstanding,
            workers,
            CancellationToken::new(),
        )
    }

    fn ms(start: Instant, n: u64) -> Instant {
        start + Duration::from_millis(n)
    }

    fn free(sched: &OpenLoop, worker: usize) {
        let taken = sched.take(&mut sched.lock(), worker, Waker::noop());
        assert!(matches!(taken, Take::Wait));
    }

    fn sends(sched: &OpenLoop, worker: usize) -> Option<Instant> {
        match sched.take(&mut sched.lock(), worker, Waker::noop()) {
            Take::Send(at) => Some(at),
            _ => None,
        }
    }

    #[test]
    fn arrivals_go_to_the_longest_free_worker_then_wait_for_one() {
        let start = Instant::now();
        let rec = Recorder::new(start, Metrics::new());
        let sched = ten(start, 100, 3);
        free(&sched, 2);
        free(&sched, 0);
        let (mut wake, mut dropped) = (Vec::new(), Vec::new());
        // Arrivals 0–2 are due by the horizon: to worker 2 (free first), 0, then the FIFO.
        let next = sched.hand_out(ms(start, 2), &mut wake, &mut dropped, &rec);
        assert_eq!(next, Some(ms(start, 3)));
        assert_eq!((wake.len(), dropped.len()), (2, 0));
        assert_eq!(sends(&sched, 0), Some(ms(start, 1)));
        assert_eq!(sends(&sched, 2), Some(ms(start, 0)));
        // Worker 1 never said it was free: it takes the waiting arrival when it asks.
        assert_eq!(sends(&sched, 1), Some(ms(start, 2)));
        assert_eq!(sched.lock().outstanding, 3);
        assert_eq!(rec.metrics().in_flight.get(), 3);
        // The rest, with nobody free: all wait; the free workers are released at the end.
        wake.clear();
        free(&sched, 1);
        assert_eq!(
            sched.hand_out(ms(start, 60), &mut wake, &mut dropped, &rec),
            None
        );
        assert_eq!(wake.len(), 1, "worker 1 got arrival 3");
        assert_eq!(sends(&sched, 1), Some(ms(start, 3)));
        for (i, w) in (4..10).zip([0, 2, 1, 0, 2, 1]) {
            assert_eq!(sends(&sched, w), Some(ms(start, i)));
        }
        assert!(matches!(
            sched.take(&mut sched.lock(), 0, Waker::noop()),
            Take::Done
        ));
        for _ in 0..10 {
            sched.complete(&rec);
        }
        assert_eq!(sched.lock().outstanding, 0);
        assert_eq!(rec.metrics().in_flight.get(), 0);
    }

    #[test]
    fn over_the_limit_is_dropped_and_the_stop_drops_what_was_not_sent() {
        let start = Instant::now();
        let rec = Recorder::new(start, Metrics::new());
        let sched = ten(start, 3, 2);
        free(&sched, 0);
        free(&sched, 1);
        let (mut wake, mut dropped) = (Vec::new(), Vec::new());
        assert_eq!(
            sched.hand_out(ms(start, 5), &mut wake, &mut dropped, &rec),
            Some(ms(start, 6))
        );
        // 0 and 1 handed out, 2 waits, 3–5 are over the limit of 3 outstanding.
        assert_eq!(dropped, (3..6).map(|i| ms(start, i)).collect::<Vec<_>>());
        for at in dropped.drain(..) {
            rec.dropped(at);
        }
        // Issuing stops at 1.5 ms before either worker sent: 0 and 1 were intended before the
        // stop and never sent (dropped); 2, waiting, and 6–9 were not due (not in the run).
        sched.stop_issuing(start + Duration::from_micros(1500), &rec);
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("runtime");
        assert_eq!(rt.block_on(sched.next(0, &rec)), None);
        assert_eq!(rt.block_on(sched.next(1, &rec)), None);
        assert_eq!(sched.lock().outstanding, 0);
        assert_eq!(rec.metrics().in_flight.get(), 0);
        let acc = rec.finish();
        assert_eq!((acc.totals.attempted, acc.totals.dropped), (0, 5));
    }
}
