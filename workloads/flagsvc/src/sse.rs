//! `GET /stream`: a server-sent-events body that sends a snapshot, then every flag change and a
//! heartbeat at an interval, until the client leaves (the body is dropped) or the server shuts
//! down (a final `shutdown` event, then the stream ends cleanly).

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures::stream::{self, Stream};
use hyper::body::Frame;
use tokio::sync::broadcast::{self, error::RecvError};
use tokio::time::{Interval, MissedTickBehavior};
use tokio_util::sync::CancellationToken;

use crate::flags::{Flag, FlagStore};

struct StreamState {
    pending_snapshot: Option<Vec<Flag>>,
    heartbeat: Interval,
    changes: broadcast::Receiver<Flag>,
    closing: CancellationToken,
    sequence: u64,
    finished: bool,
}

/// The event stream for one client.
pub fn event_stream(
    store: &Arc<FlagStore>,
    heartbeat_every: Duration,
    closing: CancellationToken,
) -> impl Stream<Item = Result<Frame<Bytes>, Infallible>> + Send + 'static {
    let start = tokio::time::Instant::now() + heartbeat_every;
    let mut heartbeat =
        tokio::time::interval_at(start, heartbeat_every.max(Duration::from_millis(1)));
    heartbeat.set_missed_tick_behavior(MissedTickBehavior::Delay);
    let state = StreamState {
        pending_snapshot: Some(store.snapshot()),
        heartbeat,
        changes: store.subscribe(),
        closing,
        sequence: 0,
        finished: false,
    };
    stream::unfold(state, |mut st| async move {
        if st.finished {
            return None;
        }
        st.sequence += 1;
        let id = st.sequence;
        if let Some(snapshot) = st.pending_snapshot.take() {
            return Some((event(id, "snapshot", &json(&snapshot)), st));
        }
        let text = tokio::select! {
            biased;
            () = st.closing.cancelled() => {
                st.finished = true;
                event(id, "shutdown", "{}")
            }
            change = st.changes.recv() => match change {
                Ok(flag) => event(id, "flag", &json(&flag)),
                Err(RecvError::Lagged(missed)) => event(id, "resync", &format!("{{\"missed\":{missed}}}")),
                Err(RecvError::Closed) => {
                    st.finished = true;
                    event(id, "shutdown", "{}")
                }
            },
            _ = st.heartbeat.tick() => event(id, "heartbeat", "{}"),
        };
        Some((text, st))
    })
}

fn json<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_else(|_| "null".to_string())
}

fn event(id: u64, name: &str, data: &str) -> Result<Frame<Bytes>, Infallible> {
    Ok(Frame::data(Bytes::from(format!(
        "id: {id}\nevent: {name}\ndata: {data}\n\n"
    ))))
}
